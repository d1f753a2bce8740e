import Synchronization

/// What ``race(_:until:)`` saw: the body's value, and whether the stop came before it.
struct Raced<Value: Sendable>: Sendable {
    /// What the body returned (when the stop came first, what it returned once cancelled).
    let value: Value
    /// Whether the stop ended before the body did.
    let stopped: Bool
}

/// Which side of a race ended.
private enum RaceEnd<Value: Sendable>: Sendable {
    case body(Value)
    case stop
}

/// Runs `body` beside `stop` (a stop signal, a deadline) in one task group: whichever ends first cancels the other,
/// and both have ended when this returns, so a body cancelled by the stop still hands back what it has (an answer
/// that came anyway, the results recorded so far). `stop` must end when cancelled.
func race<Value: Sendable>(
    _ body: @escaping @Sendable () async -> Value, until stop: @escaping @Sendable () async -> Void
) async -> Raced<Value> {
    await withTaskGroup(of: RaceEnd<Value>.self) { group in
        group.addTask { .body(await body()) }
        group.addTask {
            await stop()
            return .stop
        }
        var value: Value?
        var stopped = false
        while let ended = await group.next() {
            group.cancelAll()
            switch ended {
            case .body(let returned): value = returned
            case .stop: stopped = value == nil
            }
        }
        // Both children have ended, and one of them was the body.
        return Raced(value: value!, stopped: stopped)
    }
}

/// Runs `body` in one child task while this task waits for the first of its end and `shutdown`'s stop (or this
/// task's cancellation), which cancels it; both have ended when this returns, as with ``race(_:until:)``. Every store
/// call's grant waits here (``StoppableQuotaGate``): one child task per wait, not a second one parked on the signal.
func race<Value: Sendable>(
    _ body: @escaping @Sendable () async -> Value, until shutdown: ShutdownSignal
) async -> Raced<Value> {
    let first = FirstEnd()
    return await withTaskGroup(of: Value.self) { group in
        group.addTask {
            let value = await body()
            first.end(stopped: false)
            return value
        }
        let key = shutdown.whenRequested { first.end(stopped: true) }
        let stopped = await withTaskCancellationHandler {
            await first.wait()
        } onCancel: {
            first.end(stopped: true)
        }
        if let key { shutdown.forget(key) }
        if stopped { group.cancelAll() }
        // The only child: it has ended, or ends now that it is cancelled.
        let value = await group.next()!
        return Raced(value: value, stopped: stopped)
    }
}

/// Which came first, a body's end or a stop, told once to the one waiter.
private final class FirstEnd: Sendable {
    private struct State {
        var stopped: Bool?
        var waiter: CheckedContinuation<Bool, Never>?
    }

    private let state = Mutex(State())

    /// Records the first end (later ones change nothing) and wakes the waiter.
    func end(stopped: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.stopped == nil else { return nil }
            state.stopped = stopped
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: stopped)
    }

    /// Whether the stop came first, once either has.
    func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool? in
                if let stopped = state.stopped { return stopped }
                state.waiter = continuation
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}
