import Foundation
import Logging
import Postgres
import StoreHTTP
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// A store's odd data never stops a job (issue 17): the simulator answers a share of rows oddly (repeated rows,
/// unknown codes, missing optional fields, rows without orderId, wrong JSON types, oversized ids) and the oracle is the
/// simulator's own account of which row it answered how, never the code under test.
@Suite("Odd store data: merged, kept raw or quarantined", .serialized)
struct OddDataTests {
    static let spec = ScenarioSpec(
        seed: 71, subscriptions: 1200, oneTimePurchases: 400, refunds: 2000, historyDays: 30, futureDays: 1)

    static func options(oddRows: Double) -> SimulatorOptions {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        options.oddRows = oddRows
        return options
    }

    /// What the ledger must hold after the first window: every row the store sent that a ledger can take, with the
    /// codes as sent (unknown ones raw), once, its quantity as the Orders API prices it.
    static func expected(_ harness: JobHarness) -> (stored: Set<StoredVoid>, unstorable: Int, repeated: Int) {
        let now = harness.stores.now()
        let low = Int64(VoidedWindowPlanner.oldestStart(now: now).timeIntervalSince1970 * 1000)
        let high = Int64(now.addingTimeInterval(-60).timeIntervalSince1970 * 1000)
        let app = harness.stores.app(.google).id
        let truth = harness.stores.simulator.groundTruth()
        // A whole-order void's quantity is what the Orders API says was refunded: the order's units less its parts.
        let parts = JobHarness.parts(truth)
        let window = truth.googleVoids.filter {
            $0.app == app && $0.recorded && $0.recordedTimeMillis >= low && $0.recordedTimeMillis <= high
        }
        var stored = Set<StoredVoid>()
        for void in window where void.odd?.isUnstorable != true {
            let unknown = void.odd == .unknownCodes
            stored.insert(
                StoredVoid(
                    orderId: void.orderId,
                    partKey: void.voidedQuantity.map { "\(void.voidedTimeMillis):\($0)" } ?? "",
                    purchaseToken: void.purchaseToken, voidedMillis: void.voidedTimeMillis,
                    reason: unknown ? 97 : void.voidedReason, source: unknown ? 9 : void.voidedSource,
                    quantity: JobHarness.units(void, parts: parts)))
        }
        return (
            stored, window.filter { $0.odd?.isUnstorable == true }.count, window.filter { $0.odd == .repeated }.count
        )
    }

    func openQuarantine(_ harness: JobHarness) throws -> Int {
        try harness.connection().query(
            "SELECT count(*) AS n FROM quarantine WHERE job = 'google_voided' AND resolved_at IS NULL")[0].decode("n")
    }

    @Test func googleOddRowsAreMergedKeptOrQuarantinedAndTheJobGoesOn() async throws {
        try await StoreSimulator.withRunning(Self.options(oddRows: 0.06)) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "oddgoogle"))
            let (expected, unstorable, repeated) = Self.expected(harness)
            #expect(unstorable > 0 && repeated > 0, "the scenario holds odd rows of each sort")
            let result = try await harness.googleVoided(transport: CurlTransport())
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            #expect(result.counts["merged_repeats"] == repeated)
            #expect(result.counts["quarantined"] == unstorable)
            // Rows identical to the byte are one quarantined row, met as often as they were sent.
            let met: Int = try harness.connection().query(
                "SELECT sum(seen_count)::int AS n FROM quarantine WHERE resolved_at IS NULL")[0].decode("n")
            #expect(met == unstorable)
            let open = try openQuarantine(harness)
            let reasons = try harness.connection().query(
                "SELECT reason FROM quarantine WHERE job = 'google_voided'"
            ).map { try $0.decode("reason", as: String.self) }
            #expect(reasons.contains { $0.contains("orderId: missing") })
            #expect(reasons.contains { $0.contains("orderId: 500 characters") })
            #expect(reasons.contains { $0.contains("purchaseToken: wrong type") })
            // Unknown codes are kept raw and labelled unknown.
            let labels = try harness.connection().query(
                "SELECT DISTINCT reason_label FROM refund WHERE reason_code = 97"
            ).map { try $0.decode("reason_label", as: String.self) }
            #expect(labels == ["unknown"])

            // `status` says so and exits 1 ("attention").
            let report = try await StatusReport.gather(harness.stores.configuration, on: harness.connection())
            #expect(report.attention.contains { $0.contains("google_voided rows quarantined") })
            #expect(report.apps.flatMap(\.quarantined).map(\.rows).reduce(0, +) == open)

            // A rerun changes nothing: no row twice, no quarantined row twice.
            let rerun = try await harness.googleVoided(transport: CurlTransport())
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            let all: Int = try harness.connection().query("SELECT count(*) AS n FROM quarantine")[0].decode("n")
            #expect(all == open)
        }
    }

    /// Rows the database refuses are found row by row (a savepoint each); the rest of the page lands; after the fix
    /// `quarantine retry` lands them, and `drop` records why one is abandoned.
    @Test func rowsTheDatabaseRefusesAreQuarantinedAndRetriedAfterTheFix() async throws {
        try await StoreSimulator.withRunning(Self.options(oddRows: 0)) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "oddrefused"))
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            // A rule the rows of one product break (a schema change not yet made for them, say).
            let refused = expected.filter { $0.orderId.hasSuffix("7") }
            try harness.connection().execute(
                "ALTER TABLE refund ADD CONSTRAINT test_no_seven CHECK (platform <> 'google' OR order_id NOT LIKE '%7')"
            )
            let result = try await harness.googleVoided(transport: CurlTransport())
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected.subtracting(refused))
            #expect(try openQuarantine(harness) == refused.count)
            let states = try harness.connection().query("SELECT DISTINCT sqlstate FROM quarantine").map {
                try $0.decode("sqlstate", as: String.self)
            }
            #expect(states == ["23514"])
            #expect(try harness.checkpoint().highWater != nil, "the window drained")

            let connection = try harness.connection()
            let retry = QuarantineRetry(
                configuration: harness.stores.configuration, connection: connection, logger: Logger(label: "test")
            ) { _ in throw ReconcilerError(.failed, "no Apple app here") }
            // A retry before the fix keeps each row where it is: same id, still open, counted once more.
            let before = try QuarantineRetry.list(app: nil, all: true, on: connection)
            let early = try await retry.retry(id: nil, app: nil)
            #expect(early.landed == 0 && early.stillRefused == refused.count)
            let after = try QuarantineRetry.list(app: nil, all: true, on: connection)
            #expect(after.map(\.id) == before.map(\.id), "a retry renumbered the rows it could not store")
            #expect(after.allSatisfy { $0.resolution == nil })
            // The listing without payloads is the same rows, their payloads not read.
            let bare = try QuarantineRetry.list(app: nil, all: true, withRaw: false, on: connection)
            #expect(bare.map(\.id) == after.map(\.id) && bare.map(\.reason) == after.map(\.reason))
            #expect(bare.allSatisfy { $0.raw.isEmpty } && after.allSatisfy { !$0.raw.isEmpty })

            try harness.connection().execute("ALTER TABLE refund DROP CONSTRAINT test_no_seven")
            let first = try #require(try QuarantineRetry.list(app: nil, all: false, on: connection).first)
            #expect(try QuarantineRetry.drop(id: first.id, app: nil, reason: "checked by hand", on: connection) == 1)
            #expect(try QuarantineRetry.drop(id: first.id, app: nil, reason: "again", on: connection) == 0)
            let outcome = try await retry.retry(id: nil, app: nil)
            #expect(outcome.landed == refused.count - 1 && outcome.stillRefused == 0)
            #expect(try openQuarantine(harness) == 0)
            #expect(try harness.storedVoids().count == expected.count - 1)
        }
    }
}
