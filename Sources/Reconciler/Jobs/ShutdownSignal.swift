import Foundation
import Logging
import Synchronization

/// SIGTERM / SIGINT handling for batch jobs: the first signal asks jobs to finish the page in hand, save, and stop
/// (exit 75); jobs poll ``isRequested`` between pages, and every wait at the quota gate ends at once
/// (``StoppableQuotaGate`` waits on ``stopped()``). A second signal exits at once (progress is still safe: every page
/// commits with its checkpoint).
public final class ShutdownSignal: Sendable {
    private struct State {
        var requested = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var actions: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())
    // The dispatch sources must stay alive for the process; install() runs once, from the main command, before
    // any job starts, so this is never touched concurrently.
    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []

    /// A signal that is never raised (tests, library use).
    public init() {}

    /// Whether a stop was asked for.
    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Marks the stop as requested (signal handlers and tests) and wakes every ``stopped()`` waiter.
    /// - Returns: whether it had been requested before.
    @discardableResult
    public func request() -> Bool {
        let (before, waiters, actions) = state.withLock { state in
            defer {
                state.requested = true
                state.waiters = [:]
                state.actions = [:]
            }
            return (state.requested, Array(state.waiters.values), Array(state.actions.values))
        }
        for waiter in waiters { waiter.resume() }
        for action in actions { action() }
        return before
    }

    /// Has `action` called once a stop is requested (on the requesting thread), or at once on this one when it
    /// already was. For waits that end without a task of their own waiting on ``stopped()``.
    /// - Returns: the key that ``forget(_:)`` takes back, nil when `action` was called at once.
    func whenRequested(_ action: @escaping @Sendable () -> Void) -> Int? {
        let key: Int? = state.withLock { state in
            if state.requested { return nil }
            defer { state.nextWaiter += 1 }
            state.actions[state.nextWaiter] = action
            return state.nextWaiter
        }
        if key == nil { action() }
        return key
    }

    /// Takes back an action of ``whenRequested(_:)`` not called yet.
    func forget(_ key: Int) {
        _ = state.withLock { $0.actions.removeValue(forKey: key) }
    }

    /// Returns once a stop is requested, or when the calling task is cancelled (whichever comes first).
    public func stopped() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.requested || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Installs handlers for SIGTERM and SIGINT; the stop notice is a log event on `logger` (so `--log-format json`
    /// stays one JSON object a line).
    public func install(logger: Logger) {
        for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                if request() { exit(ExitStatus.temporary) }
                logger.warning(
                    "stopping after the page in hand (signal again to stop at once)", metadata: ["signal": "\(name)"])
            }
            source.resume()
            Self.retained.append(source)
        }
    }
}
