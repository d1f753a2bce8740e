import Foundation
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// A 30-day backlog of subscriptions (renewals share a purchase token), one-time purchases refunded in parts, and
/// voids recorded days late lands exactly, row for row, and a second day adds only what is new.
///
/// The size here keeps a debug test quick (about 60,000 rows); `scripts/bench` runs the same path with 250,000 and
/// 1,000,000 rows in a release build.
@Suite("Google voided sync: a 30-day backlog, row for row")
struct GoogleVoidedVolumeTests {
    static let spec = ScenarioSpec(
        seed: 61, subscriptions: 90_000, oneTimePurchases: 50_000, refunds: 70_000, historyDays: 30, futureDays: 3,
        lateVoidShare: 0.15, renewalVoidShare: 0.3,
        apps: [SimulatedApp(id: "demo-android", platform: .google, storeId: "com.example.demo")])

    @Test func aLargeBacklogLandsRowForRow() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvvolume"))
            let now = harness.stores.now()
            let expected = harness.firstWindowTruth(now: now)
            try #require(expected.count >= 50_000, "\(expected.count) rows")
            // The backlog has every shape the ledger must keep apart.
            let truth = simulator.groundTruth().googleVoids
            #expect(expected.contains { $0.partKey != "" }, "partial refunds")
            let tokens = Dictionary(grouping: expected, by: \.purchaseToken)
            #expect(tokens.values.contains { Set($0.map(\.orderId)).count > 1 }, "renewals sharing a token")
            #expect(tokens.values.contains { $0.count > 1 && Set($0.map(\.orderId)).count == 1 }, "parts of one order")
            let lateMillis = Int64(86_400_000)
            let late = truth.filter { $0.recorded && $0.recordedTimeMillis - $0.voidedTimeMillis >= lateMillis }
            #expect(late.count > 100, "late-recorded voids")

            let result = try await harness.googleVoided()
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.counts["inserted"] == expected.count)
            #expect(result.calls["google.voidedpurchases"] == JobHarness.pages(expected.count))
            #expect(try harness.storedVoids() == expected)
            // The voided rows (the refunds the orders show beyond them, e.g. parts older than 30 days, are not revoked).
            let rows = try harness.connection().query(
                "SELECT count(*) AS n, count(DISTINCT (order_id, part_key)) AS keys FROM refund WHERE revoked")
            #expect(try rows[0].decode("n", as: Int.self) == expected.count)
            #expect(try rows[0].decode("keys", as: Int.self) == expected.count)

            // The next day adds what was recorded since (late-recorded old voids included), nothing twice.
            simulator.clock.advance(millis: 86_400_000)
            let next = try await harness.googleVoided()
            #expect(next.exitCode == 0, "\(next.error ?? "")")
            let both = harness.truthVoids(
                recordedFrom: VoidedWindowPlanner.oldestStart(now: now),
                to: harness.stores.now().addingTimeInterval(-60))
            #expect(try harness.storedVoids() == both)
            #expect(next.counts["inserted"] == both.count - expected.count)
        }
    }
}
