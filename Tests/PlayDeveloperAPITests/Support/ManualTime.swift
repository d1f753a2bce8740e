import Foundation
import PlayDeveloperAPI
import Synchronization

/// Time that moves only when a test (or the code's injected sleep) moves it; sleeps are recorded, never slept.
final class ManualTime: Sendable {
    private let state: Mutex<(now: Date, sleeps: [Double])>
    private let jitterFraction: Double

    /// - Parameter jitterFraction: the injected random returns this fraction of its upper bound.
    init(_ start: Date = Date(timeIntervalSince1970: 1_790_000_000), jitterFraction: Double = 1) {
        state = Mutex((start, []))
        self.jitterFraction = jitterFraction
    }

    var now: Date { state.withLock { $0.now } }
    var sleeps: [Double] { state.withLock { $0.sleeps } }

    func advance(by seconds: Double) {
        state.withLock { $0.now = $0.now.addingTimeInterval(seconds) }
    }

    var runtime: PlayRuntime {
        PlayRuntime(
            now: { self.now },
            sleep: { seconds in
                self.state.withLock {
                    $0.sleeps.append(seconds)
                    $0.now = $0.now.addingTimeInterval(seconds)
                }
            },
            random: { upperBound in upperBound * self.jitterFraction }
        )
    }
}
