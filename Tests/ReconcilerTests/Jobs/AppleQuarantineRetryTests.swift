import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// `quarantine retry` of Apple rows goes through the job's normal path: a notification set aside lands its refund
/// and its reversal, not only its customer's queueing; a refund the database refused on a notification page lands
/// once the database takes it.
extension AppleRefundSyncTests {
    /// The first signed notification of `type` in the last 179 days, and the transaction id it is about.
    func firstNotification(_ type: NotificationTypeV2, _ harness: JobHarness) async throws -> (String, String) {
        var found: (String, String)?
        let now = harness.stores.now()
        let result = try await appleJob(harness, named: "test_fetch") { _, access, _ in
            let request = NotificationHistoryRequest(
                startDate: now.addingTimeInterval(-179 * 86_400), endDate: now, notificationType: type)
            let (page, _) = try await access.client.notificationHistory(
                request, paginationToken: nil, purpose: .incremental)
            let signed = try #require(page.notificationHistory.first?.signedPayload)
            let verifier = try access.verifier(for: .production)
            let notification = try await verifier.verifyNotification(signed)
            let inner = try #require(notification.payload.data?.signedTransactionInfo)
            let transaction = try await verifier.verifyTransaction(inner)
            found = (signed, try #require(transaction.payload.transactionId))
        }
        #expect(result.exitCode == 0, "\(result.error ?? "")")
        return try #require(found)
    }

    func retry(_ harness: JobHarness) async throws -> QuarantineRetry.Outcome {
        let configuration = harness.stores.configuration
        // A retry calls no store: the command's gate, never asked.
        let gate = PostgresQuotaGate(
            conninfo: harness.stores.conninfo, policy: configuration.quotaPolicy, clock: ContinuousClock())
        let retry = QuarantineRetry(
            configuration: configuration, connection: try harness.connection(), logger: Logger(label: "test")
        ) { app in
            try StoreClients.apple(
                for: app, configuration: configuration, gate: gate, logger: Logger(label: "test"))
        }
        return try await retry.retry(id: nil, app: nil)
    }

    @Test func aQuarantinedRefundOrReversalNotificationLandsItsMoneyOnRetry() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appleqretry", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            let synced = try await appleSync(harness)
            #expect(synced.exitCode == 0, "\(synced.error ?? "")")
            try expectLedgerEqualsTruth(harness)

            // As if both notifications had failed verification (a root certificate missing) and the window had
            // moved on: neither the refund nor the reversal is in the ledger, both notifications are set aside.
            let (reversal, reversed) = try await firstNotification(.refundReversed, harness)
            let (refund, refunded) = try await firstNotification(.refund, harness)
            try #require(reversed != refunded)
            let connection = try harness.connection()
            try connection.execute("DELETE FROM apple_refund_reversal WHERE transaction_id = $1", [reversed])
            try connection.execute("UPDATE refund SET reversed_at = NULL WHERE order_id = $1", [reversed])
            try connection.execute("DELETE FROM refund WHERE order_id = $1", [refunded])
            try Quarantine.record(
                [reversal, refund].map {
                    QuarantinedRow(job: .appleNotifications, naturalKey: nil, raw: $0, reason: "root missing")
                }, app: stores.app(.apple).id, runId: nil, logger: Logger(label: "test"), counters: nil,
                on: connection)
            #expect(try stored(harness) != truth(harness))

            let outcome = try await retry(harness)
            #expect(outcome.landed == 2 && outcome.stillRefused == 0, "\(outcome)")
            try expectLedgerEqualsTruth(harness)
        }
    }

    @Test func aRefundTheDatabaseRefusedOnANotificationPageLandsOnRetry() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appleqrefused",
                extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let harness = JobHarness(stores: stores)
            let (_, refunded) = try await firstNotification(.refund, harness)
            // A rule this one row breaks (a schema change not yet made for it, say).
            let connection = try harness.connection()
            try connection.execute(
                "ALTER TABLE refund ADD CONSTRAINT test_refused CHECK (order_id <> '\(refunded)')")
            let synced = try await appleSync(harness)
            #expect(synced.exitCode == 0, "\(synced.error ?? "")")
            let jobs = try connection.query("SELECT DISTINCT job FROM quarantine WHERE resolved_at IS NULL").map {
                try $0.decode("job", as: String.self)
            }
            #expect(jobs == ["apple_refunds"], "set aside as the signed transaction it is")

            try connection.execute("ALTER TABLE refund DROP CONSTRAINT test_refused")
            let outcome = try await retry(harness)
            #expect(outcome.landed >= 1 && outcome.stillRefused == 0, "\(outcome)")
            try expectLedgerEqualsTruth(harness)
        }
    }
}
