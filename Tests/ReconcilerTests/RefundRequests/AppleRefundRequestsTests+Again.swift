import AppStoreServerAPI
import Foundation
import Logging
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import Synchronization
import TestSupport
import Testing

extension AppleRefundRequestsTests {
    /// Payloads that fail verification hold the checkpoint while their requests could still be answered (Apple's 12
    /// hours: each run reads them again); quarantined that long, they stay in the quarantine and the window moves on
    /// (it used to be held for good, each run reading a longer span again). `quarantine retry` stores them once they
    /// verify.
    @Test func payloadsThatFailVerificationTwiceStayInTheQuarantineAndTheWindowMovesOn() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "applerqagain")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            simulator.setFaults(FaultSettings(rates: [.badSignature: 1]), for: .appleNotificationHistory)
            let first = try await run(stores)
            #expect(first.exitCode == 1)
            let rejected = first.counts["verification_failed"] ?? 0
            #expect(rejected >= 50)
            #expect(try Self.highWater(connection) == nil, "held for payloads set aside for the first time")

            // Read again by every run for Apple's 12 hours: a cause fixed meanwhile lets them be answered.
            let second = try await run(stores)
            #expect(second.exitCode == 1)
            #expect(try Self.highWater(connection) == nil, "held while the requests could still be answered")
            try connection.execute(
                "UPDATE quarantine SET quarantined_at = quarantined_at - interval '12 hours 1 minute'")
            let third = try await run(stores)
            #expect(third.exitCode == 1, "the failures are still reported")
            #expect(try Self.highWater(connection) == stores.now(), "the window moved on")
            #expect(try Self.count(connection, "true") == 0)
            #expect(try Self.openInQuarantine(connection) == rejected, "each kept in the quarantine once")

            let again = try await retry(stores, on: connection)
            #expect(again.landed == 0 && again.stillRefused > 0, "spoiled payloads never verify: \(again)")
            // As if the payloads had failed for a root certificate since mended: the genuine ones verify and land.
            // (Apple serves the same bytes on every read, one quarantine row each; the simulator signs a spoiled
            // payload afresh, so each run left a row of its own: one is kept per notification.)
            try connection.execute(
                """
                DELETE FROM quarantine q WHERE job = 'apple_refund_requests' AND EXISTS (
                    SELECT 1 FROM quarantine o WHERE o.job = q.job AND o.natural_key = q.natural_key AND o.id < q.id)
                """)
            simulator.clearFaults()
            let genuine = try await genuineRequests(stores)
            #expect(genuine.count == 50)
            for (key, signed) in genuine {
                try connection.execute(
                    "UPDATE quarantine SET raw = $2 WHERE job = 'apple_refund_requests' AND natural_key = $1",
                    [key, signed])
            }
            let outcome = try await retry(stores, on: connection)
            #expect(outcome.landed == 50, "\(outcome)")
            #expect(try Self.count(connection, "true") == 50)
            #expect(try Self.openInQuarantine(connection) == rejected - 50, "the outcomes' payloads stay spoiled")
        }
    }

    /// Every `CONSUMPTION_REQUEST` of the last two days as the store signed it, by notification UUID.
    func genuineRequests(_ stores: SimulatedStores) async throws -> [String: String] {
        let app = stores.app(.apple)
        let configuration = stores.configuration
        let now = stores.now()
        let found = Mutex<[String: String]>([:])
        let result = try await JobHarness(stores: stores).runner().run(job: "test_fetch", app: app, waitForLock: false)
        {
            environment in
            let access = try StoreClients.apple(
                for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
            let request = NotificationHistoryRequest(
                startDate: now.addingTimeInterval(-2 * 86_400), endDate: now, notificationType: .consumptionRequest)
            var token: String?
            repeat {
                let (page, _) = try await access.client.notificationHistory(
                    request, paginationToken: token, purpose: .incremental)
                for signed in page.notificationHistory.compactMap(\.signedPayload) {
                    let notification = try await access.verifier(for: .production).verifyNotification(signed)
                    let key = try #require(notification.payload.notificationUUID)
                    found.withLock { $0[key] = signed }
                }
                token = page.hasMore ? page.paginationToken : nil
            } while token != nil
        }
        #expect(result.exitCode == 0, "\(result.error ?? "")")
        return found.withLock { $0 }
    }

    /// `storerecon quarantine retry` for every app, as the command runs it.
    func retry(_ stores: SimulatedStores, on connection: PostgresConnection) async throws -> QuarantineRetry.Outcome {
        let configuration = stores.configuration
        // A retry calls no store: the command's gate, never asked.
        let gate = PostgresQuotaGate(
            conninfo: stores.conninfo, policy: configuration.quotaPolicy, clock: ContinuousClock())
        let retry = QuarantineRetry(configuration: configuration, connection: connection, logger: Logger(label: "test"))
        {
            try StoreClients.apple(for: $0, configuration: configuration, gate: gate, logger: Logger(label: "test"))
        }
        return try await retry.retry(id: nil, app: nil)
    }
}
