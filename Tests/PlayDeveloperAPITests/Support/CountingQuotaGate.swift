import RateLimiting
import Synchronization

/// A `QuotaGate` that lets everything through (or throws once spent) and records each acquire and report.
final class CountingQuotaGate: QuotaGate {
    struct Event: Equatable, Sendable {
        var app: String
        var api: StoreAPI
        var purpose: CallPurpose?
        var feedback: QuotaFeedback?
    }

    private let state = Mutex<[Event]>([])
    private let limit: Int?

    /// - Parameter limit: acquires allowed in all before `QuotaError` (nil: unlimited).
    init(limit: Int? = nil) { self.limit = limit }

    var events: [Event] { state.withLock { $0 } }
    var acquires: [Event] { events.filter { $0.feedback == nil } }
    var reports: [Event] { events.filter { $0.feedback != nil } }

    func acquires(_ api: StoreAPI) -> Int { acquires.filter { $0.api == api }.count }
    func feedback(_ api: StoreAPI) -> [QuotaFeedback] { reports.filter { $0.api == api }.compactMap(\.feedback) }

    func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws {
        try state.withLock { events in
            if let limit, events.filter({ $0.feedback == nil }).count >= limit {
                throw QuotaError(app: app, api: api, reason: "test limit reached")
            }
            events.append(Event(app: app, api: api, purpose: purpose, feedback: nil))
        }
    }

    func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        state.withLock { $0.append(Event(app: app, api: api, purpose: nil, feedback: feedback)) }
    }
}
