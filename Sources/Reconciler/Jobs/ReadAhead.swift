import Synchronization

/// Items (store pages) read ahead by a producer task and taken, in order, by the consumer: the task that owns the
/// job's connection and stores them.
///
/// The buffer is unbounded, so the producer never waits on the consumer: a producer bounds what it reads itself (an
/// Apple chain has at most ``PageChain/maximumApplePages`` pages). The producer's error comes after every item read
/// before it, so a consumer stores each page that arrived whole and then stops.
final class ReadAheadQueue<Item: Sendable>: Sendable {
    private enum End {
        case open
        case finished
        case failed(any Error)
    }

    private struct State {
        var items: [Item] = []
        var end = End.open
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Adds an item (the producer's side).
    func push(_ item: Item) {
        let waiter = state.withLock { state in
            state.items.append(item)
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Ends the queue (the producer's side), with the producer's error if it failed.
    func finish(throwing error: (any Error)?) {
        let waiter = state.withLock { state in
            state.end = error.map { .failed($0) } ?? .finished
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Takes every item that arrived, first waiting for one when `waiting`.
    /// - Returns: the items, in order; none when none had arrived (not waiting) or the producer is done.
    /// - Throws: the producer's error, once every item before it was taken.
    func take(waiting: Bool) async throws -> [Item] {
        guard waiting else {
            return try state.withLock { state in
                if state.items.isEmpty, case .failed(let error) = state.end { throw error }
                defer { state.items = [] }
                return state.items
            }
        }
        guard let first = try await next() else { return [] }
        // What came after it, not its error: that is for the next take.
        let after = state.withLock { state in
            defer { state.items = [] }
            return state.items
        }
        return [first] + after
    }

    /// The next item, waiting for it; nil once the producer is done and every item was taken.
    /// - Throws: the producer's error, once every item before it was taken.
    func next() async throws -> Item? {
        while true {
            let taken: Item?? = try state.withLock { state in
                if !state.items.isEmpty { return .some(state.items.removeFirst()) }
                switch state.end {
                case .open: return .none
                case .finished: return .some(nil)
                case .failed(let error): throw error
                }
            }
            if let taken { return taken }
            await withCheckedContinuation { continuation in
                let arrived = state.withLock { state in
                    guard state.items.isEmpty, case .open = state.end else { return true }
                    precondition(state.waiter == nil, "one consumer")
                    state.waiter = continuation
                    return false
                }
                if arrived { continuation.resume() }
            }
        }
    }
}

/// Runs `produce` in a child task, feeding a ``ReadAheadQueue`` that `consume` takes from in the calling task (which
/// may own a connection: `consume` never leaves it). When `consume` returns or throws, the producer is cancelled and
/// awaited, so no call of it outlives this function.
/// - Returns: what `consume` returned.
/// - Throws: what `consume` threw (the producer's error reaches it through the queue).
func withReadAhead<Item: Sendable, Value>(
    isolation: isolated (any Actor)? = #isolation,
    _ produce: @escaping @Sendable (_ push: @Sendable (Item) -> Void) async throws -> Void,
    consume: (ReadAheadQueue<Item>) async throws -> Value
) async throws -> Value {
    let queue = ReadAheadQueue<Item>()
    return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask {
            do {
                try await produce { queue.push($0) }
                queue.finish(throwing: nil)
            } catch {
                queue.finish(throwing: error)
            }
        }
        defer { group.cancelAll() }
        return try await consume(queue)
    }
}
