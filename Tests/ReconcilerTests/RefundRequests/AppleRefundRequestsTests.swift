import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// Apple's refund requests in process against the simulator: the answers go out while Notification History is still
/// being read, a page that cannot be read stops the run after every page before it is stored, and the checkpoint
/// moves only past a clean, complete chain.
@Suite("AppleRefundRequests against the simulator")
struct AppleRefundRequestsTests {
    /// 50 requests on the scenario's Apple app: three pages of Notification History (20, 20, 10).
    static func options() -> SimulatorOptions {
        var spec = ScenarioSpec(
            seed: 39, subscriptions: 80, oneTimePurchases: 60, refunds: 0, historyDays: 40, futureDays: 1,
            sandboxShare: 0)
        spec.consumptionRequests = 50
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        return options
    }

    func run(_ stores: SimulatedStores) async throws -> JobRunner.Result {
        let app = stores.app(.apple)
        let configuration = stores.configuration
        return try await JobHarness(stores: stores).runner().run(
            job: AppleRefundRequests.job, app: app, waitForLock: false
        ) { environment in
            let access = try StoreClients.apple(
                for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
            try await AppleRefundRequests(app: app, configuration: configuration, access: access)
                .run(in: environment)
        }
    }

    /// Every request's facts, as the simulator's backend would write them (each customer consenting).
    func importFacts(_ simulator: StoreSimulator, _ stores: SimulatedStores, on connection: PostgresConnection) throws {
        let csv = stores.directory.appendingPathComponent("facts.csv")
        try ConsumptionFactsExport.write(simulator.spec, to: csv)
        let report = try ConsumptionImporter(connection: connection).importFile(path: csv.path, dryRun: false)
        #expect(report.badLines.isEmpty && report.written >= 50)
    }

    static func count(_ connection: PostgresConnection, _ condition: String) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM refund_request WHERE \(condition)")[0].decode("n")
    }

    static func highWater(_ connection: PostgresConnection) throws -> Date? {
        try connection.query(
            """
            SELECT high_water FROM sync_checkpoint
            WHERE job = 'refund_requests:CONSUMPTION_REQUEST' AND high_water IS NOT NULL
            """
        ).first?.decode("high_water")
    }

    @Test func aPageThatCannotBeReadStopsTheRunAfterAnsweringThePagesBeforeIt() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "applerqpipe")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try importFacts(simulator, stores, on: connection)
            // The first page is read; every later one is refused (its pagination token expired), also after the span
            // is read again from its start.
            simulator.setFaults(FaultSettings(rates: [.expiredPageToken: 1]), for: .appleNotificationHistory)
            let failed = try await run(stores)
            #expect(failed.exitCode != 0)
            // The refused token read the span again from its first page, once (pages 1, 2, 1, 2): its requests
            // stored and answered once.
            #expect(failed.counts["history_restarts"] == 1)
            #expect(failed.calls["apple.notificationhistory"] == 4, "\(failed.calls)")
            #expect(try Self.count(connection, "true") == 20, "the first page, whole")
            #expect(try Self.highWater(connection) == nil, "the checkpoint does not move past a page not read")
            // Its requests were decided and answered before the second page failed: at least a group of them (a
            // run that read every page before answering would have answered none).
            #expect(try Self.count(connection, "answer IS NOT NULL") >= 16)
            let early = try Self.count(connection, "answer = 'answered'")
            #expect(early > 0)
            #expect(failed.calls["apple.consumption"] == early, "\(failed.calls)")

            simulator.clearFaults()
            let clean = try await run(stores)
            #expect(clean.exitCode == 0, "\(clean.error ?? "")")
            #expect(try Self.count(connection, "true") == 50)
            #expect(try Self.count(connection, "answer IS NULL") == 0)
            #expect(try Self.highWater(connection) == stores.now())
            // Nothing answered twice: the second run sent only what the first had not.
            let answered = try Self.count(connection, "answer = 'answered'")
            #expect((clean.calls["apple.consumption"] ?? 0) + early == answered, "\(clean.calls)")
            #expect(simulator.consumptionAnswers().count == answered)
            #expect(simulator.consumptionAnswers().allSatisfy { $0.calls == 1 })
        }
    }

    /// Apple's history is oldest first, and a first run looks back a day: the requests of the last 12 hours are read
    /// first, so the first page holds answers to send rather than requests already past their deadline.
    @Test func theFirstPageHoldsRequestsThatCanStillBeAnswered() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "applerqfirst")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try importFacts(simulator, stores, on: connection)
            simulator.setFaults(FaultSettings(rates: [.expiredPageToken: 1]), for: .appleNotificationHistory)
            _ = try await run(stores)
            #expect(try Self.count(connection, "true") == 20, "the first page, whole")
            // Decided nearest deadline first: a request past its deadline on this page would have been decided first.
            #expect(try Self.count(connection, "answer IS NOT NULL") >= 16)
            #expect(try Self.count(connection, "answer = 'missed'") == 0)

            simulator.clearFaults()
            let clean = try await run(stores)
            #expect(clean.exitCode == 0, "\(clean.error ?? "")")
            #expect(try Self.count(connection, "true") == 50)
            // The scenario's requests from 13 hours back, read after the others, recorded missed.
            #expect(try Self.count(connection, "answer = 'missed'") > 0)
            #expect(try Self.highWater(connection) == stores.now())
        }
    }

    @Test func payloadsThatFailVerificationAreNotStoredAndHoldTheCheckpoint() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "applerqverify")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            simulator.setFaults(FaultSettings(rates: [.badSignature: 1]), for: .appleNotificationHistory)
            let failed = try await run(stores)
            #expect(failed.exitCode == 1)
            #expect(failed.error?.contains("failed verification") == true, "\(failed.error ?? "")")
            // The 50 requests and the outcomes after them: every payload read, none stored.
            let rejected = failed.counts["verification_failed"] ?? 0
            #expect(rejected >= 50 && rejected == failed.counts["notifications"], "\(failed.counts)")
            #expect(try Self.count(connection, "true") == 0)
            #expect(try Self.highWater(connection) == nil)
            #expect(try Self.openInQuarantine(connection) == rejected, "each set aside")

            simulator.clearFaults()
            let clean = try await run(stores)
            #expect(clean.exitCode == 0, "\(clean.error ?? "")")
            #expect(try Self.count(connection, "true") == 50)
            #expect(try Self.highWater(connection) == stores.now())
            #expect(try Self.openInQuarantine(connection) == 0, "closed by the verified copies")
        }
    }

    /// The notifications `run refund-requests` set aside that are still open in the quarantine.
    static func openInQuarantine(_ connection: PostgresConnection) throws -> Int {
        try connection.query(
            """
            SELECT count(DISTINCT natural_key)::int AS n FROM quarantine
            WHERE resolved_at IS NULL AND job = 'apple_refund_requests'
            """
        )[0].decode("n")
    }
}
