import Foundation
import Payouts
import Postgres
import StoreCalendar
import StoreSimulator
import TestSupport
import Testing

extension PayoutSyncTests {
    /// A damaged earnings file (the oldest month's) is reported and not stored, and the later months are still
    /// stored (the sync used to stop at it, every night); once Google serves it whole, the next sync stores it.
    @Test func aDamagedReportIsReportedAndTheOthersAreStillStored() async throws {
        try await StoreSimulator.withRunning(Self.options(historyDays: 75)) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "payoutdamaged", payouts: true)
            let app = stores.app(.google)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            // 70 days back: at least two closed months are wanted, the oldest that of the refund.
            try Self.refundFortyDaysBack(app, on: connection, days: 70)
            let oldest: String = try connection.query(
                "SELECT to_char(min(refunded_at) AT TIME ZONE 'America/Los_Angeles', 'YYYY-MM') AS m FROM refund"
            )[0].decode("m")
            simulator.spoilEarnings(month: oldest)
            let sync = try Self.sync(app, simulator: simulator, gate: CountingGate(), on: connection)
            let error = await #expect(throws: PayoutError.self) {
                _ = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            }
            #expect(error?.code == .badFile)
            #expect(
                error?.message.contains(oldest.replacingOccurrences(of: "-", with: "")) == true,
                "\(error?.message ?? "")")
            let stored: [String] = try connection.query("SELECT month FROM payout_report ORDER BY month").map {
                try $0.decode("month")
            }
            #expect(!stored.isEmpty && !stored.contains(oldest), "\(stored)")

            simulator.spoilEarnings(month: oldest, false)
            let next = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(next.inserted == 1 && next.skipped == stored.count)
        }
    }
}
