import Foundation
import Synchronization

@testable import Reconciler

/// Requests a test hands over while the answerer runs, as the Apple intake does with a page read ahead: stored by the
/// answerer's finder on the job's connection, announced with the finder's wake.
final class FoundLater: Sendable {
    private struct State {
        var arrived: [NewRefundRequest] = []
        var wake: (@Sendable () -> Void)?
        var done = false
    }

    private let state = Mutex(State())

    /// Hands over `requests` (with facts) and wakes the answerer; nothing comes after them.
    func arrive(_ requests: [NewRefundRequest]) {
        let wake = state.withLock { state in
            state.arrived += requests
            return state.wake
        }
        wake?()
    }

    var finder: Finder { Finder(source: self) }

    struct Finder: RefundRequestFinder {
        let source: FoundLater

        func whenFound(_ wake: @escaping @Sendable () -> Void) {
            source.state.withLock { $0.wake = wake }
        }

        func storeFound(waiting: Bool, short: Bool, in environment: JobEnvironment) async throws -> FoundRequests {
            while true {
                let (arrived, done) = source.state.withLock { state in
                    defer { state.arrived = [] }
                    if !state.arrived.isEmpty { state.done = true }
                    return (state.arrived, state.done)
                }
                if !arrived.isEmpty {
                    try RefundRequestAnswererTests.store(arrived, on: environment.connection)
                    return FoundRequests(stored: true, more: false)
                }
                if done || !waiting { return FoundRequests(stored: false, more: !done) }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}
