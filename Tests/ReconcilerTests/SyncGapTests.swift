import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// A store that refuses every run while its history moves on (an Apple key wrong for months) finds a gap from the
/// same start, a little longer each night: `status` lists it once, grown, not once per run.
@Suite("SyncGap")
struct SyncGapTests {
    @Test func anOpenGapFromTheSameStartGrowsAndAnAcknowledgedOneStays() throws {
        let connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: "syncgap"))
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try connection.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('ios', 'apple', 'com.ios')")
        let from = Date(timeIntervalSince1970: 1_780_000_000)
        func night(_ n: Double) -> Date { from.addingTimeInterval(n * 86_400) }
        func gaps() throws -> [String] {
            try connection.query(
                """
                SELECT job || ' ' || extract(epoch FROM gap_to)::bigint || ' ' || (acknowledged_at IS NOT NULL) AS g
                FROM sync_gap ORDER BY id
                """
            ).map { try $0.decode("g") }
        }
        let job = "apple_notifications:REFUND"
        for n in [1.0, 2, 3, 2] { try SyncGap.record(job: job, app: "ios", from: from, to: night(n), on: connection) }
        try SyncGap.record(job: "other", app: "ios", from: from, to: night(1), on: connection)
        #expect(try gaps() == ["\(job) 1780259200 false", "other 1780086400 false"])

        let id: Int64 = try connection.query("SELECT min(id) AS id FROM sync_gap")[0].decode("id")
        #expect(try SyncGap.acknowledge(id: id, on: connection) != nil)
        try SyncGap.record(job: job, app: "ios", from: from, to: night(4), on: connection)
        try SyncGap.record(job: job, app: "ios", from: from, to: night(3), on: connection)
        #expect(
            try gaps() == ["\(job) 1780259200 true", "other 1780086400 false", "\(job) 1780345600 false"],
            "an acknowledged gap is kept as it was; the loss after it is a gap of its own")
    }
}
