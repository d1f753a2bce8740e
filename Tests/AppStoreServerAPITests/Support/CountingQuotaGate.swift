import RateLimiting
import Synchronization

/// A ``QuotaGate`` that allows everything and counts: acquires, and each report's feedback. The first `lateGrants`
/// grants say the call had to leave a second ago (a loaded host).
final class CountingQuotaGate: QuotaGate {
    struct State {
        var acquired: [(app: String, api: StoreAPI, purpose: CallPurpose)] = []
        var reports: [(app: String, api: StoreAPI, feedback: QuotaFeedback)] = []
        var refuse: QuotaError?
        var lateGrants = 0
    }

    let state = Mutex(State())

    init(refuse: QuotaError? = nil, lateGrants: Int = 0) {
        state.withLock { state in
            state.refuse = refuse
            state.lateGrants = lateGrants
        }
    }

    func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        try state.withLock { state in
            if let refuse = state.refuse { throw refuse }
            state.acquired.append((app, api, purpose))
            return state.acquired.count <= state.lateGrants ? .now - .seconds(1) : nil
        }
    }

    func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        state.withLock { $0.reports.append((app, api, feedback)) }
    }

    var acquireCount: Int { state.withLock { $0.acquired.count } }
    var feedback: [QuotaFeedback] { state.withLock { $0.reports.map(\.feedback) } }
    var apis: [StoreAPI] { state.withLock { $0.acquired.map(\.api) } }
}
