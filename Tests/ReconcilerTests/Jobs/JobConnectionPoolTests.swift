import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// ``JobConnectionPool``: a connection given back serves the next job, reset; once no job is left to start, each is
/// closed as its job ends.
@Suite("JobConnectionPool")
struct JobConnectionPoolTests {
    let conninfo: String

    init() throws {
        conninfo = try TestDatabase.create(prefix: "jobpool")
    }

    static func planMode(_ connection: PostgresConnection) throws -> String {
        try connection.query("SELECT current_setting('plan_cache_mode') AS mode")[0].decode("mode")
    }

    @Test func aConnectionGivenBackServesTheNextJobWithoutTheLastJobsSettings() throws {
        let pool = JobConnectionPool(conninfo: conninfo)
        defer { pool.close() }
        let first = try pool.take()
        let pid = first.backendPID
        // A refund-requests job plans each statement once on its connection.
        try RefundRequestStore.planStatementsOnce(on: first)
        #expect(try Self.planMode(first) == "force_generic_plan")
        pool.giveBack(first)
        #expect(pool.idleCount == 1)
        let next = try pool.take()
        #expect(next.backendPID == pid)
        #expect(try Self.planMode(next) == "auto")
        pool.giveBack(next)
    }

    @Test func onceDrainedEachConnectionGivenBackIsClosedAndTheLastStartedStillTakeTheIdle() throws {
        let pool = JobConnectionPool(conninfo: conninfo)
        let (kept, running) = (try pool.take(), try pool.take())
        pool.giveBack(kept)
        pool.drain()
        // The last job to start takes the connection left idle.
        let last = try pool.take()
        #expect(last.backendPID == kept.backendPID && last.isOpen)
        // The jobs still running end after the last job started: their connections are closed, not kept.
        pool.giveBack(running)
        pool.giveBack(last)
        #expect(!running.isOpen && !last.isOpen)
        #expect(pool.idleCount == 0)
        pool.close()
    }

    @Test func closingAtTheEndClosesTheIdleConnections() throws {
        let pool = JobConnectionPool(conninfo: conninfo)
        let connection = try pool.take()
        pool.giveBack(connection)
        #expect(pool.idleCount == 1 && connection.isOpen)
        pool.close()
        #expect(pool.idleCount == 0 && !connection.isOpen)
    }
}
