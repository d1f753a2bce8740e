import Foundation
import StoreHTTP
import StoreSimulator
import Testing

@testable import Reconciler

/// A job cancels its calls in flight when one fails (a slice's quota answer stops the others). A cancellation that
/// meets the transfer's own completion must end it once, either way (`URLSession.data(for:)` once waited for ever
/// there, a CI run hung in `GoogleVoidedQuotaTests`). ``CurlTransport`` hands cancellations to its loop thread, which
/// answers each call once.
@Suite struct TransportCancellationTests {
    /// Hundreds of calls, each cancelled at a moment spread around its completion: every one ends, answered or
    /// cancelled (a regression hangs here).
    @Test func cancellingCallsAsTheyCompleteNeverHangs() async throws {
        let options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, historyDays: 10))
        try await StoreSimulator.withRunning(options) { simulator in
            let transport = CurlTransport()
            let request = HTTPRequest(url: simulator.baseURL.appendingPathComponent("admin/stats"), timeout: 10)
            // How long one call takes here, to spread the cancellations around it.
            let began = ContinuousClock.now
            _ = try await transport.send(request)
            let callMicros = max(50, Int(began.duration(to: .now).seconds * 1_000_000))
            var answered = 0
            var cancelled = 0
            for round in 0..<20 {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    var calls: [Task<Bool, any Error>] = []
                    for _ in 0..<16 {
                        calls.append(
                            Task {
                                do {
                                    _ = try await transport.send(request)
                                    return true
                                } catch is CancellationError {
                                    return false
                                } catch let error as TransportError {
                                    // A cancellation that reached the transfer first reads as a transport error.
                                    _ = error
                                    return false
                                }
                            })
                    }
                    for (index, call) in calls.enumerated() {
                        group.addTask {
                            try await Task.sleep(for: .microseconds(callMicros * (index + round) % (2 * callMicros)))
                            call.cancel()
                            return try await call.value
                        }
                    }
                    for try await ok in group {
                        if ok { answered += 1 } else { cancelled += 1 }
                    }
                }
            }
            #expect(answered + cancelled == 20 * 16)
        }
    }
}
