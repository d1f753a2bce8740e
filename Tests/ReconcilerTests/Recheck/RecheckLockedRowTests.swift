import Foundation
import Postgres
import Reconciler
import StoreSimulator
import Synchronization
import Testing

/// A store that, when asked about `trigger`, first ends the test's transaction that holds a row lock.
final class LockReleasingSource: SubscriptionStatusSource {
    let answers: [String: StatusReading]
    let trigger: String
    private let holder: Mutex<PostgresConnection?>

    init(answers: [String: StatusReading], trigger: String, holder: sending PostgresConnection) {
        self.answers = answers
        self.trigger = trigger
        self.holder = Mutex(holder)
    }

    func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading {
        if subscription.storeId == trigger {
            try holder.withLock { connection in
                _ = try connection?.execute("COMMIT")
                connection?.close()
                connection = nil
            }
        }
        return answers[subscription.storeId] ?? .badAnswer("no scripted answer")
    }
}

@Suite("Recheck: a due row locked when its batch is claimed")
struct RecheckLockedRowTests {
    /// A worker recording a successor's answer marks the token it replaced in the same transaction, so another
    /// worker's claim can find that row locked for a moment (`SKIP LOCKED` passes it by). The run asks about it once
    /// more at its end: whether it is asked no longer hangs on the workers' timing.
    @Test func aRowLockedAtItsClaimIsAskedAtTheEndOfTheSameRun() async throws {
        var options = JobHarness.options(RecheckScriptedTests.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try RecheckHarness(simulator, prefix: "recheck_locked")
            let app = harness.stores.app(.google)
            let scripted = RecheckScriptedTests()
            try scripted.insert(harness, app: app.id, "locked")
            try scripted.insert(harness, app: app.id, "trigger")
            let now = harness.stores.now()
            func active(_ token: String) -> StatusReading {
                .observed(
                    StatusObservation(
                        state: .active, storeState: "SUBSCRIPTION_STATE_ACTIVE", entitled: true,
                        expiresAt: now.addingTimeInterval(30 * 86_400), autoRenew: true,
                        productId: "com.example.basic.monthly", orderId: "GPA.\(token)", linkedStoreId: nil))
            }
            let holder = try harness.jobs.connection()
            _ = try holder.execute("BEGIN")
            _ = try holder.query("SELECT id FROM subscription WHERE store_id = 'locked' FOR UPDATE")
            let source = LockReleasingSource(
                answers: ["locked": active("locked"), "trigger": active("trigger")], trigger: "trigger",
                holder: holder)
            let configuration = harness.stores.configuration
            // One worker and one batch: both rows are claimed before the store is asked about either.
            var recheck = ExpiryRecheck.Options(configuration.recheck)
            recheck.concurrency = 1
            recheck.batchSize = 16
            let result = try await harness.jobs.runner().run(job: ExpiryRecheck.job, app: app, waitForLock: false) {
                try await ExpiryRecheck(app: app, configuration: configuration, options: recheck, source: source)
                    .run(in: $0)
            }
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let rows = try harness.rows()
            #expect(rows["trigger"]?.storeState == "SUBSCRIPTION_STATE_ACTIVE")
            #expect(
                rows["locked"]?.storeState == "SUBSCRIPTION_STATE_ACTIVE",
                "the row locked at its claim was asked in the same run")
        }
    }
}
