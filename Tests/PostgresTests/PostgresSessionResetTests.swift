import Foundation
import Postgres
import TestSupport
import Testing

/// `PostgresConnection.resetSession()`: what a job leaves in its session is gone before the next job gets it.
@Suite("PostgresConnection: a session reset for the next job")
struct PostgresSessionResetTests {
    let conninfo: String

    init() throws {
        conninfo = try TestDatabase.create(prefix: "pgreset")
    }

    @Test func releasesLocksAndSettingsAndKeepsTheSession() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let pid = connection.backendPID
        try connection.query("SELECT pg_advisory_lock(7), pg_advisory_lock(8)")
        try connection.execute("SET statement_timeout = '77s'")
        try connection.execute("SET TimeZone = 'Europe/Paris'")
        try connection.execute("CREATE TEMP TABLE left_behind (n int)")

        try connection.resetSession()

        let row = try connection.query(
            """
            SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks,
                   current_setting('statement_timeout') AS timeout, current_setting('TimeZone') AS zone,
                   to_regclass('pg_temp.left_behind') IS NULL AS dropped
            """)[0]
        #expect(try row.decode("locks", as: Int.self) == 0)
        #expect(try row.decode("timeout", as: String.self) != "77s")
        #expect(try row.decode("zone", as: String.self) == "UTC")
        #expect(try row.decode("dropped", as: Bool.self))
        #expect(connection.backendPID == pid && connection.isIdle)
    }

    @Test func refusesInsideATransactionOpenOrAborted() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        #expect(connection.isIdle)
        try connection.execute("BEGIN")
        #expect(!connection.isIdle)
        #expect(throws: PostgresError.self) { try connection.resetSession() }
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1/0") }
        #expect(!connection.isIdle)
        #expect(throws: PostgresError.self) { try connection.resetSession() }
        connection.close()
        #expect(!connection.isIdle)
    }
}

extension PostgresSessionResetTests {
    /// A database (or role, or `PGDATESTYLE`) that prints dates another way does not change what a session reads:
    /// every session, new or reset, prints them as ISO 8601 in UTC.
    @Test func datesAreReadWhateverTheDatabasesDateStyle() throws {
        let setup = try PostgresConnection(conninfo: conninfo)
        let name: String = try setup.query("SELECT current_database() AS d")[0].decode("d")
        try setup.execute("ALTER DATABASE \"\(name)\" SET DateStyle = 'SQL, DMY'")
        try setup.execute("ALTER DATABASE \"\(name)\" SET IntervalStyle = 'sql_standard'")
        setup.close()
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        let sql = "SELECT timestamptz '2026-03-08 10:11:12.345+00' AS t, current_setting('DateStyle') AS style"
        for _ in 0..<2 {
            let row = try connection.query(sql)[0]
            #expect(try row.decode("t", as: Date.self) == Date(timeIntervalSince1970: 1_772_964_672.345))
            #expect(try row.decode("style", as: String.self) == "ISO, YMD")
            try connection.resetSession()
        }
    }
}
