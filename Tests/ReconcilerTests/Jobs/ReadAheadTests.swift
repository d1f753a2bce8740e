import Synchronization
import Testing

@testable import Reconciler

/// ``withReadAhead(isolation:_:consume:)`` and its queue, without I/O: the consumer acts on a page while later pages
/// are still being read, takes every page in order, meets the producer's error only after the pages before it, and
/// stops the producer when it is done.
@Suite("ReadAhead")
struct ReadAheadTests {
    /// A one-shot signal whose wait ends when it is fired or the waiting task is cancelled.
    struct Signal: Sendable {
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream() }

        func fire() { continuation.yield() }

        func wait() async {
            var iterator = stream.makeAsyncIterator()
            _ = await iterator.next()
        }
    }

    /// Runs `body`, failing the test rather than hanging when it has not ended after a minute (a deadlock).
    func withinAMinute<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) async -> Value? {
        let raced = await race(body) { try? await Task.sleep(for: .seconds(60)) }
        #expect(!raced.stopped, "still waiting after a minute: a deadlock")
        return raced.stopped ? nil : raced.value
    }

    @Test func theConsumerActsOnAPageBeforeTheLaterPagesAreRead() async {
        let answered = Signal()
        let seen = await withinAMinute {
            try? await withReadAhead { (feed: ReadAheadFeed<Int>) in
                feed.push(1)
                feed.push(2)
                // Page 3 comes only once page 1 was answered: reading every page before acting would wait forever.
                await answered.wait()
                feed.push(3)
            } consume: { queue in
                var seen: [Int] = []
                while let page = try await queue.next() {
                    seen.append(page)
                    if page == 1 { answered.fire() }
                }
                return seen
            }
        }
        #expect(seen == [1, 2, 3])
    }

    struct PageFailed: Error, Equatable {}

    @Test func theProducersErrorComesAfterEveryPageReadBeforeIt() async {
        let taken = await withinAMinute { () -> [String] in
            var taken: [String] = []
            do {
                _ = try await withReadAhead { (feed: ReadAheadFeed<Int>) in
                    feed.push(1)
                    feed.push(2)
                    throw PageFailed()
                } consume: { queue in
                    while let page = try await queue.next() { taken.append("page \(page)") }
                }
            } catch {
                taken.append(error is PageFailed ? "failed" : "\(error)")
            }
            return taken
        }
        #expect(taken == ["page 1", "page 2", "failed"])
    }

    @Test func aTakeHandsOverWhatArrivedAndTheErrorOnlyAfterIt() async throws {
        let queue = ReadAheadQueue<Int>()
        #expect(try await queue.take(waiting: false).isEmpty)
        queue.push(1)
        queue.push(2)
        #expect(try await queue.take(waiting: false) == [1, 2])
        queue.push(3)
        queue.push(4)
        queue.finish(throwing: PageFailed())
        #expect(try await queue.take(waiting: true) == [3, 4])
        await #expect(throws: PageFailed.self) { try await queue.take(waiting: false) }
        await #expect(throws: PageFailed.self) { try await queue.take(waiting: true) }
        let finished = ReadAheadQueue<Int>()
        finished.push(5)
        finished.finish(throwing: nil)
        #expect(try await finished.take(waiting: true) == [5])
        #expect(try await finished.take(waiting: true).isEmpty)
    }

    @Test func aConsumerThatIsDoneStopsTheProducer() async {
        let cancelled = Mutex(false)
        let first = await withinAMinute {
            try? await withReadAhead { (feed: ReadAheadFeed<Int>) in
                feed.push(1)
                // Reads on until cancelled.
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    cancelled.withLock { $0 = true }
                    throw error
                }
                feed.push(2)
            } consume: { queue in
                try await queue.next()
            }
        }
        #expect(first == 1)
        #expect(cancelled.withLock { $0 })
    }

    @Test func aProducerOnDemandReadsTheFirstItemAtOnceAndEachNextOnlyWhenAsked() async throws {
        let queue = ReadAheadQueue<Int>()
        // The first item is wanted from the start.
        #expect(queue.tryPermit())
        #expect(!queue.tryPermit())
        queue.push(1)
        // Asking before taking wants nothing more: the item in the queue is the one asked for.
        queue.askForMore()
        #expect(!queue.tryPermit())
        #expect(try await queue.take(waiting: false) == [1])
        #expect(!queue.tryPermit(), "taken, not yet asked for the next")
        queue.askForMore()
        queue.askForMore()
        #expect(queue.tryPermit())
        #expect(!queue.tryPermit(), "asking twice before the next arrives wants one item, not two")
        queue.unbound()
        #expect(queue.tryPermit())
        #expect(queue.tryPermit())
    }

    @Test func aProducerWaitingForPermissionGoesOnWhenTheConsumerAsksOrIsDone() async {
        let seen = await withinAMinute {
            try? await withReadAhead { (feed: ReadAheadFeed<Int>) in
                for item in 1...4 {
                    await feed.permit()
                    feed.push(item)
                }
            } consume: { queue in
                var seen: [Int] = []
                while seen.count < 3 {
                    seen += try await queue.take(waiting: true)
                    // Not asked for yet: the producer has not read the next.
                    #expect(try await queue.take(waiting: false).isEmpty)
                    if seen.count < 3 { queue.askForMore() }
                }
                // The fourth is never asked for: the consumer's end lets the producer go on and finish.
                return seen
            }
        }
        #expect(seen == [1, 2, 3])
    }
}
