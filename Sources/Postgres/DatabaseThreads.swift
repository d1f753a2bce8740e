import Dispatch
import Glibc

/// Threads where a statement may wait: a task executor on libdispatch's overcommitting threads.
///
/// libpq blocks the calling thread for every round trip. Swift's shared pool has one thread per core, so a statement
/// waiting there (a lock, a slow commit, a server under load) stalls every other task of the process: store answers,
/// quota grants, timers. Each job handed to this executor runs on libdispatch's overcommitting threads, which start
/// another when every one is busy or blocked. So the waits of each connection hold a thread of their own, and the
/// other tasks keep running beside them. A job enqueued by a job running here runs after it on the same thread,
/// unless that one blocks first (``DatabaseWorker``): a hop between statements then wakes no other thread. Jobs
/// enqueued from elsewhere (a store's answer, a timer) wait in one inbox served by ``inboxServers`` threads at most.
///
/// A task runs its database work here with ``run(isolation:_:)``. The child tasks it starts run here too, side by
/// side: a page being mapped or a store answer arriving is never queued behind its parent's statement, as it would
/// be on one serial thread per connection.
public final class DatabaseThreads: TaskExecutor {
    /// The process's one instance.
    public static let shared = DatabaseThreads()

    private init() {}

    /// Threads at most that serve jobs enqueued from threads other than these (one per core, two at least).
    public static var inboxServers: Int { DatabaseWorker.mostServers }

    /// The most connections a process should keep waiting at once. libdispatch serves its overcommitting queues
    /// with 255 threads at most (`DISPATCH_WORKQ_MAX_PTHREAD_COUNT`): with that many statements waiting, the next
    /// job (a grant, a store's answer, a timer) would wait for one of them to return. The rest is left for those.
    public static let mostWaitingConnections = 200

    public func enqueue(_ job: consuming ExecutorJob) {
        DatabaseWorker.submit(.task(UnownedJob(job)))
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Bounds glibc's malloc arenas to one per core (two at least), unless `MALLOC_ARENA_MAX` says otherwise. glibc
    /// gives a thread that finds the arenas busy one of its own, up to eight per core, and each keeps what was freed
    /// in it: the many threads that serve these executors would otherwise hold far more memory than the shared
    /// pool's few. Call it first thing in `main`, before other threads start.
    public static func boundMallocArenas() {
        guard getenv("MALLOC_ARENA_MAX") == nil else { return }
        // `mallopt` and `M_ARENA_MAX` (-8) are in <malloc.h>, which the Glibc module does not bring in.
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(-8, Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    /// Runs `body` with the task's non-isolated code, and that of the child tasks it starts, on these threads, so
    /// that the statements it runs never block a thread of Swift's shared pool. Called from an actor, `body` stays
    /// on that actor: an actor that owns a connection runs on a ``DatabaseThread`` instead.
    public static func run<T, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        try await withTaskExecutorPreference(shared, isolation: isolation, operation: body)
    }
}
