import Synchronization

/// Items (store pages) read ahead by a producer task and taken, in order, by the consumer: the task that owns the
/// job's connection and stores them.
///
/// Pushing never waits; a producer that should read only as the consumer needs waits for ``permit()`` before reading
/// its next item (one that does not still bounds what it reads itself: an Apple chain has at most
/// ``PageChain/maximumApplePages`` pages). The producer's error comes after every item read before it, so a consumer
/// stores each page that arrived whole and then stops.
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
        var observer: (@Sendable () -> Void)?
        /// Items the consumer took so far.
        var taken = 0
        /// Items the consumer asked for in all (``askForMore()``), counting those it took; the first is asked for
        /// from the start.
        var wanted = 1
        /// Items the producer was let start (``permit()``).
        var permitted = 0
        /// The producer waiting for the consumer to ask.
        var permitWaiter: CheckedContinuation<Void, Never>?
        /// The consumer is gone, or wants everything: the producer never waits again.
        var unbounded = false

        /// Counts the producer's next item as started, if the consumer wants it.
        mutating func grant() -> Bool {
            guard unbounded || permitted < wanted else { return false }
            permitted += 1
            return true
        }

        /// Lets the waiting producer start its next item, if the consumer wants it.
        mutating func release() -> CheckedContinuation<Void, Never>? {
            guard permitWaiter != nil, grant() else { return nil }
            return permitWaiter.take()
        }
    }

    private let state = Mutex(State())

    /// Adds an item (the producer's side).
    func push(_ item: Item) {
        let (waiter, observer) = state.withLock { state in
            state.items.append(item)
            return (state.waiter.take(), state.observer)
        }
        waiter?.resume()
        observer?()
    }

    /// Has `observer` told of each item pushed and of the end (the consumer's side, for a consumer that also waits
    /// for other things and takes items with `take(waiting: false)`).
    func observe(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observer = observer }
    }

    /// Ends the queue (the producer's side), with the producer's error if it failed.
    func finish(throwing error: (any Error)?) {
        let (waiter, observer) = state.withLock { state in
            state.end = error.map { .failed($0) } ?? .finished
            return (state.waiter.take(), state.observer)
        }
        waiter?.resume()
        observer?()
    }

    /// Returns once the consumer wants one more item than the producer started so far (the producer's side, before
    /// it reads an item it should read only on demand), or once it wants them all.
    func permit() async {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state in
                if state.grant() { return true }
                precondition(state.permitWaiter == nil, "one producer")
                state.permitWaiter = continuation
                return false
            }
            if go { continuation.resume() }
        }
    }

    /// Whether the consumer wants one more item than the producer started so far, counting it as started if so
    /// (``permit()`` without waiting).
    func tryPermit() -> Bool {
        state.withLock { $0.grant() }
    }

    /// Asks for one item beyond those taken (the consumer's side, when it runs short): a producer waiting in
    /// ``permit()`` starts it, unless it was started already.
    func askForMore() {
        state.withLock { state in
            state.wanted = max(state.wanted, state.taken + 1)
            return state.release()
        }?.resume()
    }

    /// Lets the producer read everything left without waiting (the consumer wants it all, or is gone).
    func unbound() {
        state.withLock { state in
            state.unbounded = true
            return state.release()
        }?.resume()
    }

    /// Takes every item that arrived, first waiting for one when `waiting`.
    /// - Returns: the items, in order; none when none had arrived (not waiting) or the producer is done.
    /// - Throws: the producer's error, once every item before it was taken.
    func take(waiting: Bool) async throws -> [Item] {
        guard waiting else {
            return try state.withLock { state in
                if state.items.isEmpty, case .failed(let error) = state.end { throw error }
                defer { state.items = [] }
                state.taken += state.items.count
                return state.items
            }
        }
        guard let first = try await next() else { return [] }
        // What came after it, not its error: that is for the next take.
        let after = state.withLock { state in
            defer { state.items = [] }
            state.taken += state.items.count
            return state.items
        }
        return [first] + after
    }

    /// The next item, waiting for it; nil once the producer is done and every item was taken.
    /// - Throws: the producer's error, once every item before it was taken.
    func next() async throws -> Item? {
        while true {
            let taken: Item?? = try state.withLock { state in
                if !state.items.isEmpty {
                    state.taken += 1
                    return .some(state.items.removeFirst())
                }
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

/// The producer's side of a ``ReadAheadQueue``.
struct ReadAheadFeed<Item: Sendable>: Sendable {
    fileprivate let queue: ReadAheadQueue<Item>

    /// Hands on an item.
    var push: @Sendable (Item) -> Void { { [queue] in queue.push($0) } }

    /// Returns once the consumer wants another item (``ReadAheadQueue/permit()``).
    func permit() async {
        await queue.permit()
    }

    /// Whether the consumer wants another item now (``ReadAheadQueue/tryPermit()``).
    func tryPermit() -> Bool {
        queue.tryPermit()
    }
}

/// Runs `produce` in a child task, feeding a ``ReadAheadQueue`` that `consume` takes from in the calling task (which
/// may own a connection: `consume` never leaves it). When `consume` returns or throws, the producer is cancelled and
/// awaited, so no call of it outlives this function. A producer that reads only on demand waits for
/// ``ReadAheadFeed/permit()`` before an item, which comes when the consumer asks (``ReadAheadQueue/askForMore()``).
/// - Returns: what `consume` returned.
/// - Throws: what `consume` threw (the producer's error reaches it through the queue).
func withReadAhead<Item: Sendable, Value>(
    isolation: isolated (any Actor)? = #isolation,
    _ produce: @escaping @Sendable (_ feed: ReadAheadFeed<Item>) async throws -> Void,
    consume: (ReadAheadQueue<Item>) async throws -> Value
) async throws -> Value {
    let queue = ReadAheadQueue<Item>()
    return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
        group.addTask {
            do {
                try await produce(ReadAheadFeed(queue: queue))
                queue.finish(throwing: nil)
            } catch {
                queue.finish(throwing: error)
            }
        }
        defer {
            queue.unbound()
            group.cancelAll()
        }
        return try await consume(queue)
    }
}
