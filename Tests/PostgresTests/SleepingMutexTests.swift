import Dispatch
import Postgres
import Testing

/// ``SleepingMutex`` lets one thread at a time at its value, however many threads and tasks want it.
@Suite("Sleeping mutex")
struct SleepingMutexTests {
    struct Refused: Error {}

    /// Threads more than the cores, each adding one at a time: no addition is lost.
    @Test func threadsNeverLoseAnIncrement() {
        let counter = SleepingMutex(0)
        let (threads, increments) = (8, 50_000)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                counter.withLock { value in
                    // Read, then write: two threads inside at once would lose one of their additions.
                    let read = value
                    value = read + 1
                }
            }
        }
        #expect(counter.withLock { $0 } == 400_000)
    }

    /// Tasks of one group, on Swift's pool, each adding one at a time: no addition is lost.
    @Test func tasksNeverLoseAnIncrement() async {
        let counter = SleepingMutex([Int]())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<32 {
                group.addTask {
                    for _ in 0..<2_000 { counter.withLock { $0.append(task) } }
                }
            }
        }
        let values = counter.withLock { $0 }
        #expect(values.count == 64_000)
        #expect(Set(values).count == 32)
    }

    /// What the body returns comes back; what it throws is thrown, and the lock is free again afterwards.
    @Test func returnsAndThrowsWhatTheBodyDoes() throws {
        let lock = SleepingMutex(["a": 1])
        #expect(lock.withLock { $0["a"] } == 1)
        #expect(throws: Refused.self) {
            try lock.withLock { (value: inout [String: Int]) throws(Refused) in
                value["b"] = 2
                throw Refused()
            }
        }
        #expect(lock.withLock { $0 } == ["a": 1, "b": 2])
    }
}
