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

    private struct State {
        var idle: [Idle] = []
        /// No job starts after those running: a connection given back is closed at once.
        var draining = false
    }

    private let conninfo: String
    private let state = Mutex(State())

    /// A pool that opens its connections with `conninfo`; it holds none until the first is given back.
    public init(conninfo: String) {
        self.conninfo = conninfo
    }

    /// An idle connection, or a new one when none is idle.
    /// - Throws: `PostgresError` when a new connection cannot be opened.
    public func take() throws -> PostgresConnection {
        if let reused = state.withLock({ $0.idle.popLast() }) { return reused.connection }
        return try PostgresConnection(conninfo: conninfo)
    }

    /// Takes back a connection whose job has ended: kept for the next job once its session is reset, closed when
    /// it is lost, still inside a transaction, or cannot be reset, or when no job is left to start (``drain()``).
    public func giveBack(_ connection: PostgresConnection) {
        guard !state.withLock(\.draining), connection.isIdle, (try? connection.resetSession()) != nil else {
            connection.close()
            return
        }
        state.withLock { $0.idle.append(Idle(connection: connection)) }
    }

    /// From now on closes each connection given back: no job is left to start (those just started still take the
    /// idle ones). Each backend's exit then comes as its job ends, not all together at the end of the run, where
    /// they held the cores while the last job was finishing.
    public func drain() {
        state.withLock { $0.draining = true }
    }

    /// Closes the idle connections, and each given back from now on; call it when the run is over.
    public func close() {
        let all = state.withLock { state in
            state.draining = true
            defer { state.idle = [] }
            return state.idle
        }
        for entry in all { entry.connection.close() }
    }

    /// How many connections wait for a job (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }
}
