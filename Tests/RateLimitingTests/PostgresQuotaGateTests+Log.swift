import Foundation
import Postgres
import Testing

/// `quota_acquire_batch` counts the grants still inside each window among the window's newest ones, whatever the
/// log's length (sql/0028: by halving the log, which is in time order).
extension PostgresQuotaGateTests {
    /// Sets the log of `app`'s Google Orders bucket: `old` grants `oldAge` seconds ago, then `recent` a second ago.
    static func setLog(_ app: String, old: Int, oldAge: Int, recent: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO quota_bucket (app_id, api, grants)
            SELECT $1, 'google.orders', array_cat(
                array_fill(clock_timestamp() - make_interval(secs => $3), ARRAY[$2::int]),
                array_fill(clock_timestamp() - interval '1 second', ARRAY[$4::int]))
            """, [app, old, oldAge, recent])
    }

    static func granted(
        _ app: String, wanted: Int, counts: String, windows: String, on connection: PostgresConnection
    ) throws -> (granted: Int, wait: Double?) {
        let row = try connection.query(
            """
            SELECT granted, wait_seconds FROM quota_acquire_batch(
                $1, 'google.orders', false, $2, $3::integer[], $4::double precision[], NULL, NULL)
            """, [app, wanted, counts, windows])[0]
        return (try row.decode("granted"), try row.decodeIfPresent("wait_seconds"))
    }

    @Test func aWindowCountsOnlyItsNewestGrantsThatAreStillInside() throws {
        let connection = try PostgresConnection(conninfo: Self.database("qlog"))
        defer { connection.close() }
        // 40 grants a minute ago, 60 a second ago; 70 in any 10 s: the last 70 hold 60 inside, so 10 of 16 now,
        // and the next when the second-old ones leave, about 9 s from now.
        try Self.setLog("a", old: 40, oldAge: 60, recent: 60, on: connection)
        let first = try Self.granted("a", wanted: 16, counts: "{70}", windows: "{10}", on: connection)
        #expect(first.granted == 10)
        // About 9 s less the time since the log was written (a loaded host may stall seconds between).
        #expect((first.wait ?? 0) > 5 && (first.wait ?? 0) <= 9)
        // Two windows: 61 in 10 s leaves 1 (the 61st newest is a minute old), 3000 in 2 min leaves 2900.
        try Self.setLog("b", old: 40, oldAge: 60, recent: 60, on: connection)
        #expect(
            try Self.granted("b", wanted: 16, counts: "{61,3000}", windows: "{10,120}", on: connection).granted == 1)
        // All outside the window, and an empty log: everything asked.
        try Self.setLog("c", old: 100, oldAge: 60, recent: 0, on: connection)
        #expect(try Self.granted("c", wanted: 16, counts: "{100}", windows: "{10}", on: connection).granted == 16)
        #expect(try Self.granted("d", wanted: 16, counts: "{100}", windows: "{10}", on: connection).granted == 16)
    }

    @Test func aFullMinuteOfOrdersGrantsIsCountedExactly() throws {
        let connection = try PostgresConnection(conninfo: Self.database("qlogfull"))
        defer { connection.close() }
        // Google's Orders bucket with 3,000 grants logged: 1,000 older than its minute, 2,000 inside. Of the last
        // 2,940 (the minute's count), 2,000 are inside: 940 more are allowed, and the log keeps the newest 2,940.
        try Self.setLog("g", old: 1000, oldAge: 90, recent: 2000, on: connection)
        #expect(try Self.granted("g", wanted: 1000, counts: "{2940}", windows: "{60}", on: connection).granted == 940)
        let log = try connection.query(
            "SELECT cardinality(grants) AS n FROM quota_bucket WHERE app_id = 'g' AND api = 'google.orders'")[0]
        #expect(try log.decode("n", as: Int.self) == 2940)
        let full = try Self.granted("g", wanted: 16, counts: "{2940}", windows: "{60}", on: connection)
        #expect(full.granted == 0)
        #expect((full.wait ?? 0) > 50 && (full.wait ?? 0) <= 59)
    }
}
