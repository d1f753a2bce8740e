import Reconciler
import Synchronization
import Testing

/// The nightly run's limit on database connections: jobs wait for the connections they open, in the order they
/// asked, and never hold more than the budget together.
@Suite("ConnectionBudget")
struct ConnectionBudgetTests {
    /// Waits (yielding) until `condition` holds.
    static func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    /// The order jobs got their connections in.
    final class Journal: Sendable {
        private let names = Mutex<[String]>([])
        func add(_ name: String) { names.withLock { $0.append(name) } }
        var entries: [String] { names.withLock { $0 } }
    }

    /// A job that holds its connections until `release` is called.
    final class Holder: Sendable {
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation
        private let entered = Mutex(false)

        init() { (stream, continuation) = AsyncStream.makeStream() }

        var isInside: Bool { entered.withLock { $0 } }

        func hold(_ budget: ConnectionBudget, _ count: Int, log: Journal, name: String) async throws {
            try await budget.withConnections(count) {
                log.add(name)
                entered.withLock { $0 = true }
                for await _ in stream { break }
            }
        }

        func release() { continuation.finish() }
    }

    @Test func aJobWaitsUntilItsConnectionsAreFree() async throws {
        let budget = ConnectionBudget(total: 3)
        let log = Journal()
        let first = Holder()
        let second = Holder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await first.hold(budget, 2, log: log, name: "first") }
            await Self.until { first.isInside }
            group.addTask { try await second.hold(budget, 2, log: log, name: "second") }
            await Self.until { budget.waiting == 1 }
            // 2 + 2 would be 4 of 3: the second waits.
            #expect(budget.inUse == 2)
            #expect(!second.isInside)
            first.release()
            await Self.until { second.isInside }
            #expect(budget.inUse == 2)
            second.release()
            try await group.waitForAll()
        }
        #expect(log.entries == ["first", "second"])
        #expect(budget.peak == 2)
        #expect(budget.inUse == 0)
    }

    @Test func waitersAreServedInTheOrderTheyAsked() async throws {
        let budget = ConnectionBudget(total: 3)
        let log = Journal()
        let holders = (0..<3).map { _ in Holder() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await holders[0].hold(budget, 2, log: log, name: "two") }
            await Self.until { holders[0].isInside }
            // The recheck's three connections are asked first: the one-connection job behind it waits too, although
            // one connection is free, so the big job is not passed over.
            group.addTask { try await holders[1].hold(budget, 3, log: log, name: "three") }
            await Self.until { budget.waiting == 1 }
            group.addTask { try await holders[2].hold(budget, 1, log: log, name: "one") }
            await Self.until { budget.waiting == 2 }
            #expect(budget.inUse == 2)
            holders[0].release()
            await Self.until { holders[1].isInside }
            #expect(!holders[2].isInside)
            holders[1].release()
            await Self.until { holders[2].isInside }
            holders[2].release()
            try await group.waitForAll()
        }
        #expect(log.entries == ["two", "three", "one"])
        #expect(budget.peak == 3)
    }

    @Test func aJobNeedingMoreThanTheBudgetTakesAllOfIt() async throws {
        let budget = ConnectionBudget(total: 2)
        let held = try await budget.withConnections(5) { budget.inUse }
        #expect(held == 2)
        #expect(budget.inUse == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let budget = ConnectionBudget(total: 1)
        let log = Journal()
        let holder = Holder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await holder.hold(budget, 1, log: log, name: "holder") }
            await Self.until { holder.isInside }
            let waited = await withTaskGroup(of: (any Error)?.self) { waiter in
                waiter.addTask {
                    do {
                        try await budget.withConnections(1) { log.add("waiter") }
                        return nil
                    } catch {
                        return error
                    }
                }
                await Self.until { budget.waiting == 1 }
                waiter.cancelAll()
                return await waiter.next() ?? nil
            }
            #expect(waited is CancellationError)
            #expect(budget.waiting == 0)
            holder.release()
            try await group.waitForAll()
        }
        #expect(log.entries == ["holder"])
        #expect(budget.inUse == 0)
    }
}
