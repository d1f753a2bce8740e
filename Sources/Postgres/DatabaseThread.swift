import Dispatch

/// A serial executor on a dispatch queue of its own, for an actor that owns a connection: the actor's statements
/// block the thread libdispatch serves that queue with (one of its overcommitting threads, see ``DatabaseThreads``),
/// never a thread of Swift's shared pool.
public final class DatabaseThread: SerialExecutor {
    private let queue: DispatchQueue

    /// Creates the executor and its queue.
    /// - Parameter label: the queue's name, seen in debuggers and thread dumps.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            job.runSynchronously(on: self.asUnownedSerialExecutor())
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
