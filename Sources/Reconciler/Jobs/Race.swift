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
