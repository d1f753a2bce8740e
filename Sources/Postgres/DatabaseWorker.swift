import Dispatch
import Glibc

/// What a thread of ``DatabaseThreads`` runs: a job of a task that prefers those threads, or the queued jobs of an
/// actor whose executor is a ``DatabaseThread``.
enum DatabaseWork: Sendable {
    case task(UnownedJob)
    case serial(DatabaseThread)

    func run() {
        switch self {
        case .task(let job): job.runSynchronously(on: DatabaseThreads.shared.asUnownedTaskExecutor())
        case .serial(let thread): thread.drain()
        }
    }
}

/// The state of a thread while it runs ``DatabaseWork``: the work handed to it by the work it runs, in order.
///
/// Every hop of a task between its statements (to an actor, back from it, a child task starting or finishing)
/// enqueues a job, and a job on a thread of its own costs waking a sleeping thread and putting the current one to
/// sleep, and most of those jobs come from work that is about to end on a database thread anyway. So a job enqueued by a job running here waits on the same thread and
/// runs after it; only jobs enqueued from other threads (the curl thread, a timer, Swift's shared pool) start one.
///
/// Handed work must never wait behind a statement: ``PostgresConnection`` calls ``releaseHandedWork()`` before every
/// call that blocks (a round trip, a connect, a pause before a retry), which moves what is waiting to a thread of its
/// own, where the same rules hold. Only computation that does not block runs before it.
final class DatabaseWorker {
    private var handed: [DatabaseWork]

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private init(_ work: [DatabaseWork]) {
        handed = work
    }

    /// The worker of the calling thread while it runs database work.
    private static var current: DatabaseWorker? {
        pthread_getspecific(key).map { Unmanaged<DatabaseWorker>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `work` after the work the calling thread runs, when it is a database thread; otherwise on a thread of its
    /// own.
    static func submit(_ work: DatabaseWork) {
        if let worker = current {
            worker.handed.append(work)
        } else {
            start([work])
        }
    }

    /// Gives the work handed to the calling thread a thread of its own, because the caller is about to block.
    static func releaseHandedWork() {
        guard let worker = current, !worker.handed.isEmpty else { return }
        let work = worker.handed
        worker.handed = []
        start(work)
    }

    /// Runs `work` on a thread of libdispatch's overcommitting pool: each serial queue is served by one of those
    /// threads, and libdispatch starts another when every one is busy or blocked, so no wait holds up other work.
    private static func start(_ work: [DatabaseWork]) {
        DispatchQueue(label: "storerecon-database").async {
            run(work)
        }
    }

    /// Runs `work` in order, then whatever was handed on meanwhile, on the calling thread.
    private static func run(_ work: [DatabaseWork]) {
        let worker = DatabaseWorker(work)
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(worker).toOpaque())
        defer { pthread_setspecific(key, previous) }
        while !worker.handed.isEmpty {
            worker.handed.removeFirst().run()
        }
    }
}
