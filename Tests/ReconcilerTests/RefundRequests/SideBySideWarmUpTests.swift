import Foundation
import Postgres
import StoreSimulator
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// `run refund-requests`' schedule with a real Apple job: an unpaced app starts only once the paced Apple app has
/// reported its first answers sent through its ``JobEnvironment``, and before that app's job ends.
@Suite("Side by side: unpaced apps wait for the paced ones' first answers")
struct SideBySideWarmUpTests {
    @Test(.timeLimit(.minutes(1))) func anUnpacedAppStartsOnceThePacedJobReportedItsFirstAnswers() async throws {
        try await StoreSimulator.withRunning(AppleRefundRequestsTests.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "sidebysidewarm")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try AppleRefundRequestsTests().importFacts(simulator, stores, on: connection)
            let apple = stores.app(.apple)
            let configuration = stores.configuration
            let sent = "app_id = '\(apple.id)' AND answer IN ('answered', 'failed')"
            // What the Apple app had sent when the unpaced app started, and whether its job was still running.
            let seen = Mutex<(sent: Int, appleRunning: Int)?>(nil)
            let results = await JobHarness(stores: stores).runner().runSideBySide(
                job: AppleRefundRequests.job, apps: [stores.app(.google), apple], concurrency: 2,
                paced: { $0.platform == .apple }
            ) { app, environment in
                guard app.platform == .apple else {
                    let running: Int = try environment.connection.query(
                        """
                        SELECT count(*)::int AS n FROM job_run
                        WHERE job = 'refund_requests' AND app_id = $1 AND finished_at IS NULL
                        """, [apple.id])[0].decode("n")
                    let answers = try AppleRefundRequestsTests.count(environment.connection, sent)
                    seen.withLock { $0 = (answers, running) }
                    return
                }
                let access = try StoreClients.apple(
                    for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
                try await AppleRefundRequests(app: app, configuration: configuration, access: access)
                    .run(in: environment)
                // Released by the job's report, not by its end: the unpaced app ran while this one still held on.
                while seen.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(5)) }
            }
            #expect(results.allSatisfy { $0.exitCode == 0 }, "\(results.map { $0.error ?? "" })")
            let total = try AppleRefundRequestsTests.count(connection, sent)
            try #require(total >= SideBySideSchedule.warmAnswers, "the scenario sends enough answers to warm up")
            let atStart = try #require(seen.withLock { $0 })
            #expect(atStart.sent >= SideBySideSchedule.warmAnswers, "held back until the first answers were sent")
            #expect(atStart.appleRunning == 1, "released while the Apple job still ran")
        }
    }
}
