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
/// sleep, and most of those jobs come from work that is about to end on a database thread anyway. So a job enqueued
/// by a job running here waits on the same thread and runs after it.
///
/// Jobs enqueued from other threads (the curl thread answering a burst of calls, a timer, Swift's shared pool) wait in
/// one inbox, served by at most ``mostServers`` threads at once: a thread of its own for each of them kept hundreds of
/// threads on two cores, each woken for a few microseconds of work, preempting the holders of the locks the others
/// wanted.
///
/// Handed work must never wait behind a statement: ``PostgresConnection`` calls ``releaseHandedWork()`` before every
/// call that blocks (a round trip, a connect, a pause before a retry), which moves what is waiting to a thread of its
/// own, where the same rules hold, and makes a thread serving the inbox give that up (another takes it on if work is
/// waiting there). Only computation that does not block runs before it.
final class DatabaseWorker {
    private var handed: [DatabaseWork]
    /// Whether the thread takes work from the inbox once its own is done.
    private var serving = false

    /// Work enqueued from threads that are not database threads, and how many threads serve it.
    private struct Inbox {
        var work: [DatabaseWork] = []
        var next = 0
        var servers = 0

        mutating func take() -> DatabaseWork? {
            guard next < work.count else {
                work.removeAll(keepingCapacity: true)
                next = 0
                return nil
            }
            defer { next += 1 }
            return work[next]
        }
    }

    private static let inbox = SleepingMutex(Inbox())

    /// Threads serving the inbox at most: one per core (two at least), as many as can run at once.
    static let mostServers = max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

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

    /// Runs `work` after the work the calling thread runs, when it is a database thread; otherwise in the inbox.
    static func submit(_ work: DatabaseWork) {
        if let worker = current {
            worker.handed.append(work)
            return
        }
        let serve = inbox.withLock { inbox in
            inbox.work.append(work)
            guard inbox.servers < mostServers else { return false }
            inbox.servers += 1
            return true
        }
        if serve { start([], serving: true) }
    }

    /// Gives the work handed to the calling thread a thread of its own, and the inbox another server, because the
    /// caller is about to block.
    static func releaseHandedWork() {
        guard let worker = current else { return }
        if worker.serving {
            worker.serving = false
            let replace = inbox.withLock { inbox in
                guard inbox.next < inbox.work.count else {
                    inbox.servers -= 1
                    return false
                }
                return true
            }
            if replace { start([], serving: true) }
        }
        guard !worker.handed.isEmpty else { return }
        let work = worker.handed
        worker.handed = []
        start(work, serving: false)
    }

    /// Runs `work` on a thread of libdispatch's overcommitting pool: each serial queue is served by one of those
    /// threads, and libdispatch starts another when every one is busy or blocked (up to 255, see
    /// ``DatabaseThreads/mostWaitingConnections``), so no wait holds up other work.
    private static func start(_ work: [DatabaseWork], serving: Bool) {
        DispatchQueue(label: "storerecon-database").async {
            run(work, serving: serving)
        }
    }

    /// Runs `work` in order, then whatever was handed on meanwhile, on the calling thread; then, while `serving`,
    /// what waits in the inbox, one item at a time.
    private static func run(_ work: [DatabaseWork], serving: Bool) {
        let worker = DatabaseWorker(work)
        worker.serving = serving
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(worker).toOpaque())
        defer { pthread_setspecific(key, previous) }
        while true {
            while !worker.handed.isEmpty {
                worker.handed.removeFirst().run()
            }
            guard worker.serving else { return }
            let next = inbox.withLock { inbox in
                let next = inbox.take()
                if next == nil { inbox.servers -= 1 }
                return next
            }
            guard let next else { return }
            worker.handed.append(next)
        }
    }
}
