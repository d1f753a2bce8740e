import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// Two sessions that lock the same two rows in opposite orders deadlock; the server aborts one of them.
@Suite("Transactions retried after a deadlock")
struct PostgresDeadlockTests {
    @Test func theAbortedSideRunsAgainAndBothCommit() throws {
        let conninfo = try TestDatabase.create(prefix: "pgdeadlock")
        let setup = try PostgresConnection(conninfo: conninfo)
        defer { setup.close() }
        try setup.executeScript(
            """
            CREATE TABLE pair (id int PRIMARY KEY, n int NOT NULL);
            INSERT INTO pair VALUES (1, 0), (2, 0);
            """)
        let attempts = Mutex([0, 0])
        // Each side holds its first row until the other holds its own, on the first attempt only.
        let bothHoldOne = DispatchGroup()
        bothHoldOne.enter()
        bothHoldOne.enter()
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for side in 0..<2 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                do {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    defer { connection.close() }
                    let (first, second) = side == 0 ? (1, 2) : (2, 1)
                    try connection.transactionRetryingConflicts { connection in
                        let attempt = attempts.withLock { counts in
                            counts[side] += 1
                            return counts[side]
                        }
                        try connection.execute("UPDATE pair SET n = n + 1 WHERE id = $1", [first])
                        if attempt == 1 {
                            bothHoldOne.leave()
                            bothHoldOne.wait()
                        }
                        try connection.execute("UPDATE pair SET n = n + 1 WHERE id = $1", [second])
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        done.wait()
        #expect(failures.withLock { $0 } == [])
        // One side was the deadlock's victim and ran again; each side's two updates landed exactly once.
        #expect(attempts.withLock { $0.sorted() } == [1, 2])
        let rows = try setup.query("SELECT n FROM pair ORDER BY id").map { try $0.decode("n", as: Int.self) }
        #expect(rows == [2, 2])
    }
}
