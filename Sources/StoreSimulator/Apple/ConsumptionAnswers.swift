import Synchronization

/// One answer Send Consumption Information received and accepted, per transaction: the first body (Apple weighs the
/// first) and how many times the transaction was answered in all.
public struct ConsumptionAnswer: Sendable, Equatable {
    /// The app's id.
    public var app: String
    /// The transaction the answer is about.
    public var transactionId: String
    /// The first accepted body, as received.
    public var body: String
    /// Accepted calls for this transaction (more than 1 means storerecon answered twice).
    public var calls: Int
    /// When the first answer came (simulator clock, ms).
    public var millis: Int64
    /// The plan and charge, for the outcome notification.
    var plan: Int32
    var charge: UInt16
    /// `refundPreference` of the first body, if any.
    var preference: String?
    /// `consumptionPercentage` of the first body, if any.
    var consumption: Int64? = nil
}

/// Every accepted consumption answer, and the outcome notifications they lead to.
final class ConsumptionAnswers: Sendable {
    /// A charge of a purchase in an app: what an outcome notification is about.
    private struct Charge: Hashable {
        var app: String
        var plan: Int32
        var charge: UInt16
    }

    private struct State {
        var byTransaction: [String: ConsumptionAnswer] = [:]
        /// The key in `byTransaction` of the first answer recorded for each charge: Notification History looks every
        /// charge up for each page it signs.
        var byCharge: [Charge: String] = [:]
    }

    private let answers = Mutex(State())

    /// Records an accepted answer; a later one for the same transaction only counts.
    func record(_ answer: ConsumptionAnswer) {
        answers.withLock { state in
            let key = "\(answer.app) \(answer.transactionId)"
            if var kept = state.byTransaction[key] {
                kept.calls += 1
                state.byTransaction[key] = kept
            } else {
                state.byTransaction[key] = answer
                let charge = Charge(app: answer.app, plan: answer.plan, charge: answer.charge)
                if state.byCharge[charge] == nil { state.byCharge[charge] = key }
            }
        }
    }

    /// Every answer, by app and transaction.
    var all: [ConsumptionAnswer] {
        answers.withLock { Array($0.byTransaction.values) }.sorted {
            ($0.app, $0.transactionId) < ($1.app, $1.transactionId)
        }
    }

    /// How long Apple weighs an answer before it decides alone.
    static let windowMillis: Int64 = 12 * 3_600_000

    /// The first answer for a charge of a purchase, if any.
    func answer(app: String, plan: Int32, charge: UInt16) -> ConsumptionAnswer? {
        answers.withLock { state in
            state.byCharge[Charge(app: app, plan: plan, charge: charge)].flatMap { state.byTransaction[$0] }
        }
    }

    /// The outcomes of app `app`'s refund requests (`requests`, its `CONSUMPTION_REQUEST` notifications) by `now`,
    /// oldest first. An answer with a preference given within 12 hours of its request decides a millisecond after it:
    /// `REFUND_DECLINED` after `DECLINE`, `REFUND` after a grant. Any other request (answered without a preference,
    /// late, or not at all) Apple decides alone when the 12 hours are over: one in two `REFUND`, picked by the seed
    /// and the transaction, as Google does with its reviews.
    func outcomes(app: String, requests: [NotificationEvent], now: Int64, seed: UInt64) -> [NotificationEvent] {
        return requests.compactMap { request -> NotificationEvent? in
            let end = request.millis + Self.windowMillis
            var kind: NotificationEvent.Kind
            var millis = end
            switch answer(app: app, plan: request.plan, charge: request.charge) {
            case .some(let answer) where answer.millis <= end && answer.preference == "DECLINE":
                (kind, millis) = (.refundDeclined, answer.millis + 1)
            case .some(let answer) where answer.millis <= end && answer.preference?.hasPrefix("GRANT_") == true:
                (kind, millis) = (.refund, answer.millis + 1)
            default:
                guard end <= now else { return nil }
                let draw = SplitMix64.mix(seed, 0x3EF, UInt64(request.plan), UInt64(request.charge))
                kind = draw % 2 == 0 ? .refund : .refundDeclined
            }
            return NotificationEvent(
                millis: millis, plan: request.plan, charge: request.charge, kind: kind, subtype: .none)
        }.sorted { $0.millis < $1.millis }
    }
}
