import Synchronization

/// The database connections the apps of one nightly run may hold at once (`nightly.concurrency`): a job takes the
/// connections it opens before it starts and gives them back when it ends, so the apps run side by side as far as
/// the database allows, however many apps there are.
///
/// Waiters are served in the order they asked, so a job that needs many connections (a recheck with its workers) is
/// not passed over for ever by jobs that need one. A job that needs more than the whole budget takes all of it.
public final class ConnectionBudget: Sendable {
    private struct Waiter {
        var id: Int
        var count: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        /// Ids of waits cancelled before they were queued.
        var cancelled: Set<Int> = []
        var nextId = 0
        var peak = 0
    }

    /// The connections in all.
    public let total: Int
    private let state: Mutex<State>

    /// A budget of `total` connections (at least 1).
    public init(total: Int) {
        self.total = max(1, total)
        state = Mutex(State(available: max(1, total)))
    }

    /// Connections held now.
    public var inUse: Int { state.withLock { total - $0.available } }

    /// Jobs waiting for connections now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// The most connections held at once so far.
    public var peak: Int { state.withLock { $0.peak } }

    /// Runs `body` holding `count` connections of the budget (at most the whole budget), waiting for them first.
    /// - Throws: `CancellationError` when cancelled while waiting; what `body` throws.
    public func withConnections<T>(_ count: Int, _ body: () async throws -> T) async throws -> T {
        let wanted = min(max(1, count), total)
        try await acquire(wanted)
        defer { release(wanted) }
        return try await body()
    }

    private func acquire(_ count: Int) async throws {
        try Task.checkCancellation()
        let id: Int? = state.withLock { state in
            if state.waiters.isEmpty, state.available >= count {
                Self.take(count, &state, total: total)
                return nil
            }
            defer { state.nextId += 1 }
            return state.nextId
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    if state.cancelled.remove(id) != nil {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    serve(&state)
                }
            }
        } onCancel: {
            state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return
                }
                state.waiters.remove(at: index).continuation.resume(throwing: CancellationError())
                serve(&state)
            }
        }
    }

    private func release(_ count: Int) {
        state.withLock { state in
            state.available += count
            serve(&state)
        }
    }

    /// Wakes the waiters at the head of the queue while their connections are free.
    private func serve(_ state: inout State) {
        while let first = state.waiters.first, state.available >= first.count {
            state.waiters.removeFirst()
            Self.take(first.count, &state, total: total)
            first.continuation.resume()
        }
    }

    private static func take(_ count: Int, _ state: inout State, total: Int) {
        state.available -= count
        state.peak = max(state.peak, total - state.available)
    }
}
