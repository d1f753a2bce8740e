import Postgres
import TestSupport
import Testing

/// `transaction` commits only what it says it commits.
@Suite struct TransactionGuardTests {
    let connection: PostgresConnection

    init() throws {
        connection = try PostgresConnection(conninfo: try TestDatabase.create(prefix: "pgtxguard"))
        try connection.execute("CREATE TABLE t (n int PRIMARY KEY)")
    }

    func stored() throws -> [Int] {
        try connection.query("SELECT n FROM t ORDER BY n").map { try $0.decode("n") }
    }

    /// A body that catches a failed statement and goes on: the server rolled the whole transaction back, and the
    /// COMMIT that answers `ROLLBACK` is an error, not a success.
    @Test func aCommitThatTheServerTurnedIntoARollbackIsAnError() throws {
        let error = try #require(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO t VALUES (1)")
                _ = try? connection.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(error.operation == "commit" && error.message.contains("ROLLBACK"), "\(error)")
        #expect(try stored().isEmpty)
        #expect(connection.isIdle)
    }

    /// Nested, the inner COMMIT would commit the outer transaction's work half done.
    @Test func aTransactionInsideAnotherIsRefused() throws {
        let error = try #require(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.execute("INSERT INTO t VALUES (2)")
                try connection.transaction { try $0.execute("INSERT INTO t VALUES (3)") }
            }
        }
        #expect(error.code == .usage, "\(error)")
        #expect(try stored().isEmpty)
        try connection.transaction { try $0.execute("INSERT INTO t VALUES (4)") }
        #expect(try stored() == [4])
    }
}
