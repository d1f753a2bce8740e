import Foundation
import TestSupport
import Testing

@testable import Postgres

@Suite("Prepared statements against a real server")
struct PreparedStatementTests {
    let conninfo: String

    init() throws {
        conninfo = try TestDatabase.create(prefix: "pgprep")
    }

    /// The session's prepared statements whose text is `sql` (or all, for nil), read with a text used once so that
    /// the reading itself prepares nothing: (name, executions by name).
    func prepared(_ connection: PostgresConnection, _ sql: String? = nil) throws -> [(String, Int)] {
        let rows = try connection.query(
            """
            SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements
            WHERE $1::text IS NULL OR statement = $1 ORDER BY name -- \(UUID().uuidString)
            """, [sql])
        return try rows.map { (try $0.decode("name", as: String.self), try $0.decode("runs", as: Int.self)) }
    }

    @Test func aStatementRunTenTimesIsPreparedOnceAndRunNineTimesByName() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int + 1 AS n"
        for value in 1...10 {
            #expect(try connection.query(sql, [value])[0].decode("n", as: Int.self) == value + 1)
        }
        let statements = try prepared(connection, sql)
        #expect(statements.count == 1)
        #expect(statements.first?.1 == 9)
        #expect(connection.preparedStatementCount == 1)
    }

    @Test func aTextUsedOnceIsNotPrepared() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.query("SELECT $1::text AS once", ["x"])
        #expect(try prepared(connection, "SELECT $1::text AS once").isEmpty)
        #expect(connection.preparedStatementCount == 0)
    }

    @Test func theCapLetsTheLeastRecentlyUsedGoAndDeallocatesIt() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        connection.statements = PreparedStatementCache(capacity: 2)
        let texts = (1...4).map { "SELECT \($0) + $1::int AS n" }
        for sql in texts {
            for value in 0..<3 { #expect(try connection.query(sql, [value])[0].decode("n", as: Int.self) >= value) }
        }
        #expect(connection.preparedStatementCount == 2)
        // The evicted texts were deallocated before each later prepare, except the one evicted by the last prepare.
        let onServer = try prepared(connection).map(\.0)
        #expect(onServer.count == 3)
        #expect(connection.statements.name(of: texts[0]) == nil)
        #expect(connection.statements.name(of: texts[1]) == nil)
        #expect(onServer.contains(try #require(connection.statements.name(of: texts[3]))))
        #expect(try prepared(connection, texts[0]).isEmpty)
    }

    @Test(arguments: ["SELEC $1::int", "SELECT $1::int FROM no_such_table", "SELECT $1::int; SELECT 2"])
    func aFailingStatementCachesNothingAndKeepsItsError(_ sql: String) throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let first = #expect(throws: PostgresError.self) { try connection.query(sql, [1]) }
        for _ in 0..<3 {
            let again = #expect(throws: PostgresError.self) { try connection.query(sql, [1]) }
            #expect(again == first)
        }
        #expect(first?.code == .server)
        #expect(["42601", "42P01"].contains(first?.sqlState ?? ""))
        #expect(first?.description.hasPrefix("postgres query failed [SQLSTATE 42") == true)
        #expect(connection.preparedStatementCount == 0)
        #expect(try prepared(connection).isEmpty)
        #expect(try connection.query("SELECT $1::int AS n", [5])[0].decode("n", as: Int.self) == 5)
    }

    @Test func aColumnAddedOutsideATransactionIsPreparedAgainAndAnswered() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE shape (a int)")
        try connection.execute("INSERT INTO shape VALUES (1)")
        let sql = "SELECT * FROM shape WHERE a = $1"
        for _ in 0..<3 { #expect(try connection.query(sql, [1]).count == 1) }
        let before = try #require(connection.statements.name(of: sql))
        let migrator = try PostgresConnection(conninfo: conninfo)
        try migrator.execute("ALTER TABLE shape ADD COLUMN b text DEFAULT 'new'")
        let row = try connection.query(sql, [1])[0]
        #expect(try row.decode("b", as: String.self) == "new")
        let after = try #require(connection.statements.name(of: sql))
        #expect(after != before)
        try connection.query(sql, [1])
        #expect(try prepared(connection).map(\.0) == [after])
    }

    @Test func aColumnAddedUnderATransactionIsAClearErrorAndTheNextRunWorks() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE shape (a int)")
        let sql = "SELECT * FROM shape WHERE a = $1"
        for _ in 0..<3 { try connection.query(sql, [1]) }
        try PostgresConnection(conninfo: conninfo).execute("ALTER TABLE shape ADD COLUMN b text")
        let error = #expect(throws: PostgresError.self) {
            try connection.transaction { try $0.query(sql, [1]) }
        }
        #expect(error?.sqlState == "0A000")
        #expect(error?.description.contains("cached plan must not change result type") == true)
        #expect(error?.description.contains("run the transaction again") == true)
        #expect(error?.isStalePreparedStatement == true)
        let columns = try connection.transaction { try $0.query(sql, [1]).columns }
        #expect(columns == ["a", "b"])
    }

    @Test func aTransactionRetriedOnConflictsIsRetriedWhenAMigrationChangedAStatementsColumns() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE shape (a int)")
        let sql = "SELECT * FROM shape WHERE a = $1"
        for _ in 0..<3 { try connection.query(sql, [1]) }
        try PostgresConnection(conninfo: conninfo).execute("ALTER TABLE shape ADD COLUMN b text")
        var attempts = 0
        let columns = try connection.transactionRetryingConflicts { connection in
            attempts += 1
            return try connection.query(sql, [1]).columns
        }
        #expect(columns == ["a", "b"])
        #expect(attempts == 2)
    }

    @Test func aStatementRunsAgainAfterItsTransactionAbortedAndRolledBack() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int * 2 AS n"
        for _ in 0..<2 {
            try connection.transaction { try $0.query(sql, [1]) }  // prepared under a transaction that commits
            #expect(throws: PostgresError.self) {
                try connection.transaction { connection in
                    try connection.query(sql, [2])
                    try connection.query("SELECT 1 / $1::int", [0])
                }
            }
            let aborted = #expect(throws: PostgresError.self) {
                try connection.transaction { connection in
                    _ = try? connection.query("SELECT 1 / $1::int", [0])
                    try connection.query(sql, [3])
                }
            }
            #expect(aborted?.sqlState == "25P02")
        }
        #expect(try connection.query(sql, [4])[0].decode("n", as: Int.self) == 8)
        #expect(try prepared(connection, sql).count == 1)
        #expect(try prepared(connection, "ROLLBACK").count == 1)  // prepared too, and runs in an aborted transaction
    }

    @Test func aStatementPreparedInATransactionThatRollsBackStaysPrepared() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int - 1 AS n"
        try connection.query(sql, [1])
        struct Undo: Error {}
        #expect(throws: Undo.self) {
            try connection.transaction { connection in
                try connection.query(sql, [1])
                throw Undo()
            }
        }
        #expect(connection.preparedStatementCount == 1)
        #expect(try connection.query(sql, [10])[0].decode("n", as: Int.self) == 9)
        #expect(try prepared(connection, sql).first?.1 == 2)
    }

    @Test func discardAllClearsTheCacheAndAResetSessionKeepsIt() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int AS n"
        for _ in 0..<3 { try connection.query(sql, [1]) }
        try connection.execute("DISCARD ALL")
        #expect(connection.preparedStatementCount == 0)
        for _ in 0..<3 { #expect(try connection.query(sql, [2])[0].decode("n", as: Int.self) == 2) }
        #expect(try prepared(connection, sql).count == 1)
        try connection.execute("SET TimeZone = 'Asia/Tokyo'")
        try connection.resetSession()
        #expect(connection.preparedStatementCount == 1)
        #expect(try prepared(connection, sql).count == 1)
        #expect(try connection.query(sql, [3])[0].decode("n", as: Int.self) == 3)
        #expect(try connection.query("SHOW TimeZone")[0].decode("TimeZone", as: String.self) == "UTC")
    }

    @Test func statementsDroppedBehindTheCachesBackArePreparedAgain() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int + 100 AS n"
        for _ in 0..<3 { try connection.query(sql, [1]) }
        // Not a text the connection recognises as dropping them.
        try connection.execute("DO $$ BEGIN EXECUTE 'DEALLOC' || 'ATE ALL'; END $$")
        #expect(connection.preparedStatementCount == 1)
        #expect(try connection.query(sql, [1])[0].decode("n", as: Int.self) == 101)
        #expect(try prepared(connection, sql).count == 1)
    }

    @Test func aLostConnectionForgetsItsStatementsAndANewOneStartsAfresh() throws {
        let connection = try PostgresConnection(conninfo: conninfo)
        let sql = "SELECT $1::int AS n"
        for _ in 0..<3 { try connection.query(sql, [1]) }
        #expect(connection.preparedStatementCount == 1)
        let other = try PostgresConnection(conninfo: conninfo)
        try other.query("SELECT pg_terminate_backend($1::int)", [Int(connection.backendPID)])
        let lost = #expect(throws: PostgresError.self) { try connection.query(sql, [1]) }
        #expect(lost?.code == .connectionLost)
        #expect(connection.preparedStatementCount == 0)
        let fresh = try PostgresConnection(conninfo: conninfo)
        for _ in 0..<3 { #expect(try fresh.query(sql, [7])[0].decode("n", as: Int.self) == 7) }
        #expect(try prepared(fresh, sql).first?.1 == 2)
    }
}
