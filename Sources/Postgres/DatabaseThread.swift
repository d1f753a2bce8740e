import Synchronization

/// A serial executor for an actor that owns a connection: the actor's jobs run one at a time on the threads of
/// ``DatabaseThreads``, so its statements block one of those threads, never a thread of Swift's shared pool.
///
/// A task that hops to the actor from a database thread usually finds the actor idle; its job then runs on that same
/// thread once the task's own job returns, and the task's next job after the actor's runs there too, with no other
/// thread woken for either hop.
public final class DatabaseThread: SerialExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var draining = false
    }

    /// The name given at creation, for diagnostics.
    public let label: String
    private let state = Mutex(State())

    /// Creates the executor.
    /// - Parameter label: a name for the executor, for diagnostics.
    public init(label: String) {
        self.label = label
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let idle = state.withLock { state in
            state.jobs.append(job)
            defer { state.draining = true }
            return !state.draining
        }
        if idle { DatabaseWorker.submit(.serial(self)) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Runs the queued jobs in order until none is left; only one thread drains at a time.
    func drain() {
        while true {
            let batch = state.withLock { state in
                if state.jobs.isEmpty { state.draining = false }
                var taken: [UnownedJob] = []
                swap(&taken, &state.jobs)
                return taken
            }
            if batch.isEmpty { return }
            for job in batch {
                job.runSynchronously(on: asUnownedSerialExecutor())
            }
        }
    }
}
