import Glibc

/// A lock around a value that puts a waiting thread to sleep at once rather than spinning: a plain glibc
/// `pthread_mutex_t` (a futex, no priority inheritance, no spinning).
///
/// `Synchronization.Mutex` on Linux spins about a thousand times before it sleeps on a priority-inheritance futex.
/// With more threads than cores (Swift's pool, the database threads, the curl thread) the holder of a lock is often
/// descheduled, and every waiter then spins through its time slice for nothing; the priority-inheritance path costs
/// more in the kernel as well. The locks on a store call's path are held for a few dictionary operations, so
/// sleeping on the first miss costs less than spinning.
///
/// A class so that the `pthread_mutex_t` keeps one address (glibc's mutex must not move).
public final class SleepingMutex<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// Creates a lock around `value`.
    public init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
