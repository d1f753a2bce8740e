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
    private let lateGrants: Int

    /// - Parameters:
    ///   - limit: acquires allowed in all before `QuotaError` (nil: unlimited).
    ///   - lateGrants: the first this many grants say the call must have left a second ago.
    init(limit: Int? = nil, lateGrants: Int = 0) {
        self.limit = limit
        self.lateGrants = lateGrants
    }

    var events: [Event] { state.withLock { $0 } }
    var acquires: [Event] { events.filter { $0.feedback == nil } }
    var reports: [Event] { events.filter { $0.feedback != nil } }

    func acquires(_ api: StoreAPI) -> Int { acquires.filter { $0.api == api }.count }
    func feedback(_ api: StoreAPI) -> [QuotaFeedback] { reports.filter { $0.api == api }.compactMap(\.feedback) }

    func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        let granted = try state.withLock { events in
            let granted = events.filter({ $0.feedback == nil }).count
            if let limit, granted >= limit {
                throw QuotaError(app: app, api: api, reason: "test limit reached")
            }
            events.append(Event(app: app, api: api, purpose: purpose, feedback: nil))
            return granted
        }
        return granted < lateGrants ? .now - .seconds(1) : .now + .seconds(60)
    }

    func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        state.withLock { $0.append(Event(app: app, api: api, purpose: nil, feedback: feedback)) }
    }
}
