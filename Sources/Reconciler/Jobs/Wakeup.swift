import Synchronization

/// A signal one task waits for and any number of others give: ``wait()`` returns once ``signal()`` was called since
/// the last ``wait()`` returned (signals given while nobody waits are kept as one).
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Wakes the waiting task, or the next one to wait.
    func signal() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter.take() else {
                state.pending = true
                return nil as CheckedContinuation<Void, Never>?
            }
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once a signal came since the last return (at once when one is pending). One waiter at a time.
    func wait() async {
        await withCheckedContinuation { continuation in
            let signalled = state.withLock { state in
                precondition(state.waiter == nil, "one waiter")
                guard state.pending else {
                    state.waiter = continuation
                    return false
                }
                state.pending = false
                return true
            }
            if signalled { continuation.resume() }
        }
    }

    /// Whether a signal waits for the next ``wait()`` (for tests).
    var isSignalled: Bool { state.withLock { $0.pending } }
}
