import Foundation
import Postgres
import Synchronization
import TestSupport
import Testing

/// Work enqueued from a database thread waits for the job that enqueued it on the same thread, unless that job blocks
/// first: then it gets a thread of its own. Actors on a ``DatabaseThread`` still run one job at a time.
@Suite("Database threads hand work on")
struct DatabaseWorkerTests {
    /// A child task started on a database thread runs on that thread once its parent suspends, waking no other.
    @Test func aChildRunsOnItsParentsThreadWhenTheParentSuspends() async throws {
        let threads = try await DatabaseThreads.run {
            try await withThrowingTaskGroup(of: pthread_t.self) { group in
                let parent = pthread_self()
                group.addTask { pthread_self() }
                let child = try await group.next()
                return (parent, child)
            }
        }
        #expect(threads.1.map { pthread_equal($0, threads.0) != 0 } == true)
    }

    /// The child handed to the thread is what unlocks the lock its parent then waits for: the parent's statement must
    /// send the child to another thread first, or both wait for ever (the watchdog then ends the waiting session).
    @Test func aHandedChildNeverWaitsBehindItsParentsStatement() async throws {
        let ((locked, unlocked), fired) = try await withHeldLock("worker-test") { holder, waiter, key in
            try await DatabaseThreads.run {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask { try holder.connection.advisoryUnlock(key) }
                    try waiter.connection.advisoryLock(key)
                    let unlocked = try await group.next() ?? false
                    return (try waiter.connection.advisoryUnlock(key), unlocked)
                }
            }
        }
        #expect(!fired)
        #expect(unlocked && locked)
    }

    /// Two children handed to one thread: the first waits for a lock that only the second releases, so the first's
    /// statement must send the second to another thread.
    @Test func aHandedChildNeverWaitsBehindAnEarlierOnesStatement() async throws {
        let (results, fired) = try await withHeldLock("worker-test-siblings") { holder, waiter, key in
            try await DatabaseThreads.run {
                try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                    group.addTask {
                        try waiter.connection.advisoryLock(key)
                        return ("waiter", try waiter.connection.advisoryUnlock(key))
                    }
                    group.addTask { ("holder", try holder.connection.advisoryUnlock(key)) }
                    var results: [String: Bool] = [:]
                    for try await (name, done) in group { results[name] = done }
                    return results
                }
            }
        }
        #expect(!fired)
        #expect(results == ["waiter": true, "holder": true])
    }

    /// Jobs enqueued from other threads wait in one inbox served by a few threads: a server about to block in a
    /// statement hands the inbox on, so the job that ends the waits runs though more jobs wait than there are servers.
    /// (A server that kept the inbox while blocked would stall it for good: the time limit then fails the test.)
    @Test(.timeLimit(.minutes(1))) func inboxWorkNeverWaitsBehindAServersStatement() async throws {
        let conninfo = try TestDatabase.create(prefix: "pgworker")
        let key = AdvisoryLockKey("worker-test-inbox")
        let holder = Owned(try PostgresConnection(conninfo: conninfo))
        let waiters = try (0...DatabaseThreads.inboxServers).map { _ in
            Owned(try PostgresConnection(conninfo: conninfo))
        }
        defer { for session in [holder] + waiters { session.connection.close() } }
        try holder.connection.advisoryLock(key)
        // Should the inbox stall, the waiters give up after 20 s rather than hold the shared cluster's locks.
        for waiter in waiters { _ = try waiter.connection.execute("SET lock_timeout = '20s'") }
        let start = Latch(count: waiters.count + 1)
        let unlocked = try await withThrowingTaskGroup(of: Bool.self) { group in
            for waiter in waiters {
                group.addTask {
                    try await DatabaseThreads.run {
                        await start.arrive()
                        try waiter.connection.advisoryLock(key)
                        return try waiter.connection.advisoryUnlock(key)
                    }
                }
            }
            group.addTask {
                try await DatabaseThreads.run {
                    await start.arrive()
                    // Unlocks only once every waiter waits, each having blocked the thread that ran it.
                    for _ in 0..<2_500 {
                        let rows = try holder.connection.query(
                            """
                            SELECT count(*)::int AS n FROM pg_locks, pg_sleep(0.01)
                            WHERE NOT granted AND locktype = 'advisory'
                              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                            """)
                        if try rows[0].decode("n", as: Int.self) == waiters.count { break }
                    }
                    return try holder.connection.advisoryUnlock(key)
                }
            }
            // Resumed from this task's thread, not a database thread: all of them land in the inbox at once.
            await start.openWhenAllArrived()
            return try await group.reduce(into: 0) { count, unlocked in count += unlocked ? 1 : 0 }
        }
        #expect(unlocked == waiters.count + 1)
    }

    /// Runs `body` with two sessions of a new database, `holder` holding the advisory lock `name` and `waiter` watched
    /// (should it wait for ever, the watchdog ends its session). Returns what `body` returned and whether it fired.
    private func withHeldLock<T: Sendable>(
        _ name: String, _ body: @Sendable (Owned, Owned, AdvisoryLockKey) async throws -> T
    ) async throws -> (T, fired: Bool) {
        let conninfo = try TestDatabase.create(prefix: "pgworker")
        let key = AdvisoryLockKey(name)
        let holder = Owned(try PostgresConnection(conninfo: conninfo))
        let waiter = Owned(try PostgresConnection(conninfo: conninfo))
        defer {
            holder.connection.close()
            waiter.connection.close()
        }
        try holder.connection.advisoryLock(key)
        let watchdog = Terminator(conninfo: conninfo, pid: waiter.connection.backendPID)
        watchdog.start()
        let value = try await body(holder, waiter, key)
        watchdog.stop()
        return (value, watchdog.fired)
    }

    /// Many tasks, on database threads and off them, call an actor whose executor is a ``DatabaseThread`` and runs a
    /// statement in each call: no two of its calls overlap and none is lost.
    @Test func anActorOnADatabaseThreadRunsOneJobAtATime() async throws {
        let conninfo = try TestDatabase.create(prefix: "pgworker")
        let tally = try Tally(conninfo: conninfo)
        let tasks = 16
        let calls = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<tasks {
                group.addTask {
                    if index % 2 == 0 {
                        for _ in 0..<calls { try await tally.add() }
                    } else {
                        try await DatabaseThreads.run {
                            for _ in 0..<calls { try await tally.add() }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let (count, overlaps, stored) = try await tally.result()
        #expect(count == tasks * calls)
        #expect(stored == tasks * calls)
        #expect(overlaps == 0)
    }
}

/// Counts calls in memory and in a table, noting any call that starts while another runs.
private actor Tally {
    private let thread = DatabaseThread(label: "tally")
    private let connection: PostgresConnection
    private let inside = Atomic(false)
    private var count = 0
    private var overlaps = 0

    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    init(conninfo: String) throws {
        connection = try PostgresConnection(conninfo: conninfo)
        try connection.execute("CREATE TABLE tally (n int NOT NULL)")
        try connection.execute("INSERT INTO tally VALUES (0)")
    }

    func add() throws {
        if inside.exchange(true, ordering: .acquiringAndReleasing) { overlaps += 1 }
        defer { inside.store(false, ordering: .releasing) }
        try connection.execute("UPDATE tally SET n = n + 1")
        count += 1
    }

    func result() throws -> (Int, Int, Int) {
        let rows = try connection.query("SELECT n FROM tally")
        return (count, overlaps, try rows[0].decode("n", as: Int.self))
    }
}

/// Holds `count` tasks until the test opens it, then resumes them all from the opening task's thread.
private final class Latch: Sendable {
    private struct State {
        var waiting: [CheckedContinuation<Void, Never>] = []
        var opener: CheckedContinuation<Void, Never>?
    }

    private let count: Int
    private let state = Mutex(State())

    init(count: Int) { self.count = count }

    func arrive() async {
        await withCheckedContinuation { continuation in
            let opener = state.withLock { state in
                state.waiting.append(continuation)
                defer { if state.waiting.count == count { state.opener = nil } }
                return state.waiting.count == count ? state.opener : nil
            }
            opener?.resume()
        }
    }

    func openWhenAllArrived() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.waiting.count < count { state.opener = continuation }
                return state.waiting.count == count
            }
            if ready { continuation.resume() }
        }
        for waiter in state.withLock({ $0.waiting }) { waiter.resume() }
    }
}

/// A connection moved into the one task that uses it at a time.
private final class Owned: @unchecked Sendable {
    let connection: PostgresConnection
    init(_ connection: PostgresConnection) { self.connection = connection }
}

/// Ends a session from a plain thread if the test has not stopped it within 30 s (only a process whose handed work
/// waits behind a blocked statement gets there).
private final class Terminator: Sendable {
    let conninfo: String
    let pid: Int32
    private let state = Mutex((stopped: false, fired: false))
    private let done = DispatchSemaphore(value: 0)

    init(conninfo: String, pid: Int32) {
        self.conninfo = conninfo
        self.pid = pid
    }

    var fired: Bool { state.withLock { $0.fired } }

    func start() {
        Thread.detachNewThread { [self] in
            guard done.wait(timeout: .now() + 30) == .timedOut else { return }
            let fire = state.withLock { state in
                state.fired = !state.stopped
                return state.fired
            }
            guard fire, let admin = try? PostgresConnection(conninfo: conninfo) else { return }
            _ = try? admin.query("SELECT pg_terminate_backend($1)", [Int(pid)])
            admin.close()
        }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        done.signal()
    }
}
