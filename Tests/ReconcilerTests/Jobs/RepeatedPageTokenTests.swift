import Foundation
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// A store that repeats its next-page token is not paged forever (issue 27): the chain ends with an error naming the
/// app, the API and the token, after the one call that showed the repeat.
@Suite("A store that repeats its page token", .serialized)
struct RepeatedPageTokenTests {
    /// Runs `job` with a watchdog: past `ceiling` calls to `endpoint` it asks the job to stop (the loop was not
    /// caught: on code without the guard the job would page until the day's quota).
    static func bounded(
        _ simulator: StoreSimulator, endpoint: SimulatorEndpoint, ceiling: Int,
        _ job: @escaping @Sendable (ShutdownSignal) async throws -> JobRunner.Result
    ) async throws -> JobRunner.Result {
        let shutdown = ShutdownSignal()
        return try await withThrowingTaskGroup(of: JobRunner.Result?.self) { group in
            group.addTask { try await job(shutdown) }
            group.addTask {
                while !Task.isCancelled {
                    let calls = simulator.statistics().filter { $0.endpoint == endpoint }.map(\.granted).reduce(0, +)
                    if calls > ceiling {
                        shutdown.request()
                        return nil
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return nil
            }
            for try await result in group {
                if let result {
                    group.cancelAll()
                    return result
                }
            }
            throw CancellationError()
        }
    }

    static func calls(_ simulator: StoreSimulator, _ endpoint: SimulatorEndpoint) -> Int {
        simulator.statistics().filter { $0.endpoint == endpoint }.map(\.granted).reduce(0, +)
    }

    @Test func googleVoidedEndsTheChainAfterTheRepeatedToken() async throws {
        var options = JobHarness.options(GoogleVoidedFaultTests.spec)
        JobHarness.unlimited(&options)
        options.faults[.googleVoidedPurchases] = FaultSettings(rates: [.repeatedPageToken: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvloop"))
            let result = try await Self.bounded(simulator, endpoint: .googleVoidedPurchases, ceiling: 40) {
                try await harness.googleVoided(shutdown: $0)
            }
            #expect(result.exitCode == 1, "\(result.error ?? "")")
            let error = result.error ?? ""
            #expect(error.contains("app demo-android, google.voidedpurchases, slice 0: the store sent page token \""))
            #expect(error.contains("again after 2 pages"), "\(error)")
            // The first page (asked without a token) and the one that named its own token again.
            #expect(Self.calls(simulator, .googleVoidedPurchases) == 2)
            // The first page is stored, and the checkpoint stays before the unfinished window.
            #expect((result.counts["inserted"] ?? 0) > 0)
            #expect(try harness.checkpoint().highWater == nil)
        }
    }

    @Test func appleNotificationHistoryEndsTheChainAfterTheRepeatedToken() async throws {
        var options = JobHarness.options(AppleRefundFaultTests.spec)
        JobHarness.unlimited(&options)
        options.faults[.appleNotificationHistory] = FaultSettings(rates: [.repeatedPageToken: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "aploop", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let app = stores.app(.apple)
            let configuration = stores.configuration
            let result = try await Self.bounded(simulator, endpoint: .appleNotificationHistory, ceiling: 40) {
                shutdown in
                try await JobHarness(stores: stores).runner(shutdown: shutdown).run(
                    job: AppleRefundSync.job, app: app, waitForLock: false
                ) { environment in
                    let access = try StoreClients.apple(
                        for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
                    try await AppleRefundSync(app: app, configuration: configuration, access: access)
                        .run(.incremental, in: environment)
                }
            }
            #expect(result.exitCode == 1, "\(result.error ?? "")")
            let error = result.error ?? ""
            #expect(
                error.contains(
                    "app \(app.id), apple.notificationhistory, REFUND notifications: the store sent page token"),
                "\(error)")
            #expect(Self.calls(simulator, .appleNotificationHistory) == 2)
        }
    }
}
