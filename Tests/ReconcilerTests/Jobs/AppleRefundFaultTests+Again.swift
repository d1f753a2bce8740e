import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

extension AppleRefundFaultTests {
    /// Notifications that fail verification hold the checkpoint once, so a payload spoiled on its way is read again;
    /// failing the same way on the next run, they stay in the quarantine and the window moves on (it used to be held
    /// for good, and the notifications signed after it were never read).
    @Test func notificationsThatFailVerificationTwiceNoLongerHoldTheCheckpoint() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        options.faults[.appleNotificationHistory] = FaultSettings(rates: [.badSignature: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appleagain", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            func refundsHighWater() throws -> Date? {
                try connection.query(
                    "SELECT high_water FROM sync_checkpoint WHERE job = 'apple_notifications:REFUND'"
                ).first?.decodeIfPresent("high_water")
            }
            let first = try await run(stores)
            #expect(first.exitCode == 1)
            #expect((first.counts["verification_failed"] ?? 0) > 0)
            #expect(try refundsHighWater() == nil, "held for payloads set aside for the first time")
            let second = try await run(stores)
            #expect(second.exitCode == 1, "the failures are still reported")
            #expect(try refundsHighWater() != nil, "the window moved on")
            let open: Int = try connection.query(
                """
                SELECT count(DISTINCT natural_key)::int AS n FROM quarantine
                WHERE resolved_at IS NULL AND job = 'apple_notifications'
                """
            )[0].decode("n")
            #expect(open == first.counts["verification_failed"], "each kept in the quarantine")
        }
    }

    /// A notification window left in flight longer than Apple keeps notifications (no run for months): the run reads
    /// a new window from the oldest Apple keeps and records what it can no longer read as a gap (it used to ask for a
    /// start after the end, which Apple refuses, every night).
    @Test func aWindowInFlightOlderThanAppleKeepsStartsAfreshWithAGap() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applestale", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            let app = stores.app(.apple).id
            let job = "apple_notifications:REFUND"
            let now = stores.now()
            var checkpoint = try SyncCheckpoint.load(job: job, app: app, on: connection)
            checkpoint.windowStart = now.addingTimeInterval(-200 * 86_400)
            checkpoint.windowEnd = now.addingTimeInterval(-190 * 86_400)
            checkpoint.pageToken = "stale"
            try checkpoint.save(on: connection)
            let result = try await run(stores)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let after = try SyncCheckpoint.load(job: job, app: app, on: connection)
            #expect(!after.inFlight && after.highWater != nil)
            let gaps = try connection.query("SELECT gap_from FROM sync_gap WHERE job = $1", [job])
            #expect(gaps.count == 1)
            #expect(try gaps.first?.decode("gap_from", as: Date.self) == checkpoint.windowStart)
        }
    }
}
