import Synchronization
import Testing

@testable import Reconciler

/// ``Wakeup``: a signal given while nobody waits is kept (once), a waiter is woken by the next signal.
@Suite("Wakeup")
struct WakeupTests {
    @Test func aSignalGivenBeforeTheWaitEndsItAtOnceAndSignalsAreKeptAsOne() async {
        let wakeup = Wakeup()
        #expect(!wakeup.isSignalled)
        wakeup.signal()
        wakeup.signal()
        #expect(wakeup.isSignalled)
        await wakeup.wait()
        // The two signals were one: none is left for the next wait.
        #expect(!wakeup.isSignalled)
    }

    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func aWaiterIsWokenByASignalFromAnotherTask() async {
        let wakeup = Wakeup()
        let log = Log()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await wakeup.wait()
                log.add("woken")
            }
            group.addTask {
                log.add("signalled")
                wakeup.signal()
            }
        }
        #expect(log.all == ["signalled", "woken"])
        #expect(!wakeup.isSignalled)
    }
}
