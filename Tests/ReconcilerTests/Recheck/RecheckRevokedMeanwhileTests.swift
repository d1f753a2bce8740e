import Foundation
import Postgres
import Reconciler
import StoreSimulator
import Testing

/// A store that, when asked about `trigger`, first has the ledger revoke it (as a voided refund of its current order
/// stored by another job does), then answers what it would have said a moment before: still granted.
struct RevokingSource: SubscriptionStatusSource {
    let answers: [String: StatusReading]
    let trigger: String
    let conninfo: String

    func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading {
        if subscription.storeId == trigger {
            let connection = try PostgresConnection(conninfo: conninfo)
            defer { connection.close() }
            try connection.execute(
                "UPDATE subscription SET state = 'revoked', entitled = false WHERE store_id = $1", [trigger])
        }
        return answers[subscription.storeId] ?? .badAnswer("no scripted answer")
    }
}

@Suite("Recheck: a subscription the ledger revoked while the store was asked")
struct RecheckRevokedMeanwhileTests {
    /// The answer that still grants is not written over the revocation (it used to set the row back to active and
    /// clear its flag until its next expiry); the row is flagged, and the next run asks again and writes what the
    /// store says then.
    @Test func aGrantingAnswerDoesNotUndoARevocationMadeWhileItWasAsked() async throws {
        var options = JobHarness.options(RecheckScriptedTests.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try RecheckHarness(simulator, prefix: "recheck_revoked")
            let app = harness.stores.app(.google)
            let scripted = RecheckScriptedTests()
            try scripted.insert(harness, app: app.id, "refunded")
            let now = harness.stores.now()
            let active = StatusReading.observed(
                StatusObservation(
                    state: .active, storeState: "SUBSCRIPTION_STATE_ACTIVE", entitled: true,
                    expiresAt: now.addingTimeInterval(30 * 86_400), autoRenew: true,
                    productId: "com.example.basic.monthly", orderId: "GPA.refunded", linkedStoreId: nil))
            let configuration = harness.stores.configuration
            func run(_ source: some SubscriptionStatusSource) async throws -> JobRunner.Result {
                try await harness.jobs.runner().run(job: ExpiryRecheck.job, app: app, waitForLock: false) {
                    try await ExpiryRecheck(
                        app: app, configuration: configuration, options: ExpiryRecheck.Options(configuration.recheck),
                        source: source
                    ).run(in: $0)
                }
            }
            let first = try await run(
                RevokingSource(answers: ["refunded": active], trigger: "refunded", conninfo: harness.stores.conninfo))
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            let connection = try harness.jobs.connection()
            let row = try connection.query(
                "SELECT state, entitled, flag_reason FROM subscription WHERE store_id = 'refunded'")[0]
            #expect(try row.decode("state", as: String.self) == "revoked")
            #expect(try row.decode("entitled", as: Bool.self) == false)
            #expect(try row.decodeIfPresent("flag_reason", as: String.self) == "revoked_while_asked")

            // The next run asks again; what the store says now (here: revoked, expired) is written.
            try connection.execute("UPDATE subscription SET claimed_until = NULL WHERE store_id = 'refunded'")
            let expired = StatusReading.observed(
                StatusObservation(
                    state: .revoked, storeState: "SUBSCRIPTION_STATE_EXPIRED", entitled: false,
                    expiresAt: now, autoRenew: false, productId: "com.example.basic.monthly",
                    orderId: "GPA.refunded", linkedStoreId: nil))
            let second = try await run(
                RevokingSource(answers: ["refunded": expired], trigger: "none", conninfo: harness.stores.conninfo))
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            let after = try connection.query(
                "SELECT store_state, flag_reason FROM subscription WHERE store_id = 'refunded'")[0]
            #expect(try after.decodeIfPresent("store_state", as: String.self) == "SUBSCRIPTION_STATE_EXPIRED")
            #expect(try after.decodeIfPresent("flag_reason", as: String.self) == nil)
        }
    }
}
