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
}

/// Every accepted consumption answer, and the outcome notifications they lead to.
final class ConsumptionAnswers: Sendable {
    private let answers = Mutex<[String: ConsumptionAnswer]>([:])

    /// Records an accepted answer; a later one for the same transaction only counts.
    func record(_ answer: ConsumptionAnswer) {
        answers.withLock { answers in
            let key = "\(answer.app) \(answer.transactionId)"
            if var kept = answers[key] {
                kept.calls += 1
                answers[key] = kept
            } else {
                answers[key] = answer
            }
        }
    }

    /// Every answer, by app and transaction.
    var all: [ConsumptionAnswer] {
        answers.withLock { Array($0.values) }.sorted { ($0.app, $0.transactionId) < ($1.app, $1.transactionId) }
    }

    /// The outcome Apple sends after an answer, a millisecond after it: `REFUND_DECLINED` after `DECLINE`, `REFUND`
    /// after a grant; none after facts only (Apple decides alone, later).
    func outcomes(app: String) -> [NotificationEvent] {
        all.filter { $0.app == app }.compactMap { answer in
            let kind: NotificationEvent.Kind
            switch answer.preference {
            case "DECLINE": kind = .refundDeclined
            case "GRANT_FULL", "GRANT_PRORATED": kind = .refund
            default: return nil
            }
            return NotificationEvent(
                millis: answer.millis + 1, plan: answer.plan, charge: answer.charge, kind: kind, subtype: .none)
        }
    }
}
