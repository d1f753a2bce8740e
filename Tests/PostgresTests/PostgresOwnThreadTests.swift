import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// A connection's statements wait on the connection's own thread: more sessions blocked on a lock than the machine
/// has cores leave Swift's shared threads free, so a timer in the same process keeps ticking meanwhile.
@Suite("Connections wait on threads of their own")
struct PostgresOwnThreadTests {
    /// More waiters than cores, and never fewer than eight.
    static let waiters = max(8, 2 * ProcessInfo.processInfo.activeProcessorCount + 2)

    @Test func aTimerTicksWhileMoreSessionsThanCoresWaitOnALock() async throws {
        let conninfo = try TestDatabase.create(prefix: "pgownthread")
        let key = AdvisoryLockKey("own-thread-test")
        let holder = try PostgresConnection(conninfo: conninfo)
        defer { holder.close() }
        try holder.advisoryLock(key)
        // Only a run whose waits stall the process needs this: the holder's session is ended from a plain thread
        // so that the waiters get the lock, the process can run again and the test fails instead of hanging.
        let watchdog = Watchdog(conninfo: conninfo, holderPID: holder.backendPID)
        watchdog.start()
        let ticks = Ticks()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(5), clock: .continuous)
                    ticks.count.add(1, ordering: .relaxed)
                }
                return false
            }
            for _ in 0..<Self.waiters {
                group.addTask {
                    let connection = try PostgresConnection(conninfo: conninfo)
                    defer { connection.close() }
                    return try await DatabaseThreads.run {
                        try connection.advisoryLock(key)
                        return try connection.advisoryUnlock(key)
                    }
                }
            }
            let observer = try PostgresConnection(conninfo: conninfo)
            defer { observer.close() }
            while !watchdog.fired, try Self.waiting(on: key, observer) < Self.waiters {
                try await Task.sleep(for: .milliseconds(20))
            }
            let before = ticks.count.load(ordering: .relaxed)
            while !watchdog.fired, ticks.count.load(ordering: .relaxed) < before + 3 {
                try await Task.sleep(for: .milliseconds(5))
            }
            // The ticks came while every waiter was still blocked on the lock: nothing has released it yet.
            let stillWaiting = watchdog.fired ? 0 : try Self.waiting(on: key, observer)
            watchdog.stop()
            #expect(!watchdog.fired, "the process stalled while its sessions waited on the lock")
            #expect(stillWaiting == Self.waiters)
            if !watchdog.fired { #expect(try holder.advisoryUnlock(key)) }
            var released = 0
            for _ in 0..<Self.waiters {
                if try await group.next() == true { released += 1 }
            }
            group.cancelAll()
            #expect(released == Self.waiters)
        }
    }

    /// Sessions the server shows waiting for the advisory lock `key`.
    static func waiting(on key: AdvisoryLockKey, _ observer: PostgresConnection) throws -> Int {
        let bits = UInt64(bitPattern: key.value)
        let rows = try observer.query(
            """
            SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND NOT granted AND classid = $1::bigint::oid AND objid = $2::bigint::oid
            """, [Int64(bits >> 32), Int64(bits & 0xffff_ffff)])
        return try rows[0].decode("n", as: Int.self)
    }
}

/// A timer's ticks, counted from its own task.
private final class Ticks: Sendable {
    let count = Atomic(0)
}

/// Ends the lock holder's session from a thread outside Swift's pool if the test has not stopped it within a
/// minute (only a process that cannot run its tasks gets there).
private final class Watchdog: Sendable {
    let conninfo: String
    let holderPID: Int32
    private let state = Mutex((stopped: false, fired: false))
    private let done = DispatchSemaphore(value: 0)

    init(conninfo: String, holderPID: Int32) {
        self.conninfo = conninfo
        self.holderPID = holderPID
    }

    var fired: Bool { state.withLock { $0.fired } }

    func start() {
        Thread.detachNewThread { [self] in
            guard done.wait(timeout: .now() + 60) == .timedOut else { return }
            let fire = state.withLock { state in
                state.fired = !state.stopped
                return state.fired
            }
            guard fire, let admin = try? PostgresConnection(conninfo: conninfo) else { return }
            _ = try? admin.query("SELECT pg_terminate_backend($1)", [Int(holderPID)])
            admin.close()
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        done.signal()
    }
}
