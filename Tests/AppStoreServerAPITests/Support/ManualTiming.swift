import Foundation
import StoreHTTP
import Synchronization

/// A ``RetryTiming`` whose sleep advances a manual clock and records the waits; random is a fixed fraction of the
/// range, and the ranges asked for are recorded.
final class ManualTiming: Sendable {
    private let state = Mutex((now: 0.0, sleeps: [Double](), ranges: [ClosedRange<Double>]()))
    let fraction: Double

    init(fraction: Double = 0.5) {
        self.fraction = fraction
    }

    var timing: RetryTiming {
        RetryTiming(
            now: { self.state.withLock { $0.now } },
            sleep: { seconds in
                self.state.withLock { state in
                    state.sleeps.append(seconds)
                    state.now += seconds
                }
            },
            random: { range in
                self.state.withLock { $0.ranges.append(range) }
                return range.lowerBound + (range.upperBound - range.lowerBound) * self.fraction
            })
    }

    func advance(_ seconds: Double) { state.withLock { $0.now += seconds } }
    var sleeps: [Double] { state.withLock { $0.sleeps } }
    var ranges: [ClosedRange<Double>] { state.withLock { $0.ranges } }
}
