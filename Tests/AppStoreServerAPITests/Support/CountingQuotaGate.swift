import RateLimiting
import Synchronization

/// A ``QuotaGate`` that allows everything and counts: acquires, and each report's feedback.
final class CountingQuotaGate: QuotaGate {
    struct State {
        var acquired: [(app: String, api: StoreAPI, purpose: CallPurpose)] = []
        var reports: [(app: String, api: StoreAPI, feedback: QuotaFeedback)] = []
        var refuse: QuotaError?
    }

    let state = Mutex(State())

    init(refuse: QuotaError? = nil) {
        state.withLock { $0.refuse = refuse }
    }

    func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        try state.withLock { state in
            if let refuse = state.refuse { throw refuse }
            state.acquired.append((app, api, purpose))
        }
        return nil
    }

    func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        state.withLock { $0.reports.append((app, api, feedback)) }
    }

    var acquireCount: Int { state.withLock { $0.acquired.count } }
    var feedback: [QuotaFeedback] { state.withLock { $0.reports.map(\.feedback) } }
    var apis: [StoreAPI] { state.withLock { $0.acquired.map(\.api) } }
}
