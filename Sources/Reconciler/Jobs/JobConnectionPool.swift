import Postgres
import Synchronization

/// The job connections of one side-by-side run (``JobRunner/runSideBySide(job:apps:concurrency:paced:gates:record:_:)``):
/// when an app's job ends, its connection serves the next app to start, so that fifty apps open as many connections
/// as run at once rather than fifty (each new backend costs the server a fork and cold caches).
///
/// A connection is kept only when its job left it as a new one would be: open, outside any transaction, and reset
/// by ``PostgresConnection/resetSession()`` (advisory locks released, settings back to their defaults). Any other
/// (a transaction left open or aborted by an error, a lost connection, a failed reset) is closed.
public final class JobConnectionPool: Sendable {
    /// A connection waiting for its next job.
    private struct Idle: @unchecked Sendable {
        // A connection belongs to one task at a time; an idle one belongs to none until `take()` hands it out.
        let connection: PostgresConnection
    }

    private let conninfo: String
    private let idle = Mutex<[Idle]>([])

    /// A pool that opens its connections with `conninfo`; it holds none until the first is given back.
    public init(conninfo: String) {
        self.conninfo = conninfo
    }

    /// An idle connection, or a new one when none is idle.
    /// - Throws: `PostgresError` when a new connection cannot be opened.
    public func take() throws -> PostgresConnection {
        if let reused = idle.withLock({ $0.popLast() }) { return reused.connection }
        return try PostgresConnection(conninfo: conninfo)
    }

    /// Takes back a connection whose job has ended: kept for the next job once its session is reset, closed when
    /// it is lost, still inside a transaction, or cannot be reset.
    public func giveBack(_ connection: PostgresConnection) {
        guard connection.isIdle, (try? connection.resetSession()) != nil else {
            connection.close()
            return
        }
        idle.withLock { $0.append(Idle(connection: connection)) }
    }

    /// Closes the idle connections; call it when the run is over.
    public func close() {
        let all = idle.withLock { idle in
            defer { idle = [] }
            return idle
        }
        for entry in all { entry.connection.close() }
    }
}
