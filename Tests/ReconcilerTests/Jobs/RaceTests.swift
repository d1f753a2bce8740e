import Foundation
import Synchronization
import Testing

@testable import Reconciler

/// The one way a body is raced against a stop or a deadline, and `GoogleVoidedSync.Summary`'s equality.
@Suite("Racing a body against a stop")
struct RaceTests {
    @Test(.timeLimit(.minutes(1))) func aBodyThatEndsFirstCancelsTheStop() async {
        let raced = await race({ 7 }, until: { try? await Task.sleep(for: .seconds(3600)) })
        #expect(raced.value == 7)
        #expect(!raced.stopped)
    }

    @Test(.timeLimit(.minutes(1))) func aStopThatEndsFirstCancelsTheBodyAndKeepsWhatItReturns() async {
        // The body waits until it is cancelled, which only the stop's end can do.
        let raced = await race(
            { () async -> String in
                do {
                    try await Task.sleep(for: .seconds(3600))
                    return "finished"
                } catch {
                    return "cancelled"
                }
            }, until: {})
        #expect(raced.value == "cancelled")
        #expect(raced.stopped)
    }

    @Test func summariesWithGapsEndingApartDiffer() {
        var first = GoogleVoidedSync.Summary()
        first.gap = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 86_400))
        var second = first
        #expect(first == second)
        second.gap = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 172_800))
        #expect(first != second)
    }
}

/// The race every quota wait runs in (``StoppableQuotaGate``): one child task, ended by the stop signal.
@Suite("Racing a body against the stop signal")
struct SignalRaceTests {
    @Test(.timeLimit(.minutes(1))) func aBodyThatEndsFirstIsNotStopped() async {
        let shutdown = ShutdownSignal()
        let raced = await race({ 7 }, until: shutdown)
        #expect(raced.value == 7)
        #expect(!raced.stopped)
    }

    @Test(.timeLimit(.minutes(1))) func theSignalCancelsTheBodyAndKeepsWhatItReturns() async {
        let shutdown = ShutdownSignal()
        let started = AsyncStream<Void>.makeStream()
        let raced = await withTaskGroup(of: Raced<String>?.self) { group in
            group.addTask {
                await race(
                    { () async -> String in
                        started.continuation.yield()
                        do {
                            try await Task.sleep(for: .seconds(3600))
                            return "finished"
                        } catch {
                            return "cancelled"
                        }
                    }, until: shutdown)
            }
            // The signal comes once the body waits: only the signal can end that wait.
            for await _ in started.stream { break }
            shutdown.request()
            return await group.next() ?? nil
        }
        #expect(raced?.value == "cancelled")
        #expect(raced?.stopped == true)
    }

    @Test(.timeLimit(.minutes(1))) func aSignalAlreadyGivenStopsAtOnce() async {
        let shutdown = ShutdownSignal()
        shutdown.request()
        let raced = await race(
            { () async -> Bool in (try? await Task.sleep(for: .seconds(3600))) != nil }, until: shutdown)
        #expect(raced.stopped)
        #expect(raced.value == false, "the body was cancelled")
    }

    @Test(.timeLimit(.minutes(1))) func cancellingTheCallerStopsTheBody() async {
        let task = Task {
            await race(
                { () async -> Bool in (try? await Task.sleep(for: .seconds(3600))) != nil }, until: ShutdownSignal())
        }
        task.cancel()
        // The body's sleep ends by cancellation (whichever side the race saw first): the wait does not outlive its
        // caller.
        #expect(await task.value.value == false)
    }
}

/// The stop signal's registry, spread over shards: a stop reaches every action still registered, in any shard.
@Suite("The stop signal's actions")
struct ShutdownActionsTests {
    @Test func aStopCallsEveryActionStillRegisteredOnceAndNoneForgotten() {
        let shutdown = ShutdownSignal()
        let calls = Mutex([Int: Int]())
        let keys = (0..<100).map { index in
            shutdown.whenRequested { calls.withLock { $0[index, default: 0] += 1 } }
        }
        #expect(keys.allSatisfy { $0 != nil })
        for index in stride(from: 0, to: 100, by: 3) { shutdown.forget(keys[index] ?? -1) }
        #expect(!shutdown.isRequested)
        #expect(!shutdown.request())
        #expect(shutdown.request())
        let called = calls.withLock { $0 }
        #expect(called.count == 66)
        #expect(called.values.allSatisfy { $0 == 1 })
        #expect(called.keys.allSatisfy { $0 % 3 != 0 })
        // Registered after the stop: called at once, with no key to take back.
        #expect(shutdown.whenRequested { calls.withLock { $0[1000, default: 0] += 1 } } == nil)
        #expect(calls.withLock { $0[1000] } == 1)
    }
}
