import Foundation
import Postgres

/// What `status` says of an app's refund requests.
public struct RefundRequestStatus: Codable, Sendable, Equatable {
    /// Requests not answered yet whose deadline has not passed (undecided or without facts).
    public var waiting: Int
    /// The nearest deadline among them.
    public var nearestDeadline: Date?
    /// Requests missed (a `no_answer` rule's are not counted): recorded `missed` in the last 24 hours, whatever
    /// their deadline, or left unanswered past a deadline in that day: never decided (the job did not run since) or
    /// still without the backend's facts (the store decided without an answer).
    public var missedLastDay: Int

    /// Creates the status.
    public init(waiting: Int, nearestDeadline: Date?, missedLastDay: Int) {
        self.waiting = waiting
        self.nearestDeadline = nearestDeadline
        self.missedLastDay = missedLastDay
    }
}

extension StatusReport {
    /// Within this much of its deadline, an unanswered request needs an operator.
    static let refundRequestWarning: TimeInterval = 2 * 3600

    /// The requests `status` counts (`app_id`, `deadline`, `open`, `missed`), as of `now` (a parameter), those of
    /// `app` (a parameter) or every app's: those not answered whose deadline is at most a day past (through
    /// `refund_request_open`): open (undecided or without facts) before the deadline, missed when still so after it
    /// (undecided: the job stopped running and nothing else would ever record them; without facts: the store decided
    /// without storerecon's answer, which the job records as `no_facts`, not `missed`); and those the job recorded `missed`
    /// in the day before `now`, however old their deadline (a run after an outage records them at once:
    /// `refund_request_missed`). A `no_answer` rule's requests are not counted.
    static func countedRequestsSQL(now: String, app: String? = nil) -> String {
        let ofApp = app.map { "app_id = \($0) AND " } ?? ""
        return """
            SELECT app_id, deadline, answer IS NULL OR answer = 'no_facts' AS open,
                   (answer IS NULL OR answer = 'no_facts') AND deadline <= \(now) AS missed
            FROM refund_request
            WHERE \(ofApp)(answer IS NULL OR answer IN ('no_facts', 'no_consent'))
              AND deadline > \(now)::timestamptz - interval '1 day' AND preference IS DISTINCT FROM 'no_answer'
            UNION ALL
            SELECT app_id, deadline, false, true
            FROM refund_request
            WHERE \(ofApp)answer = 'missed' AND answered_at > \(now)::timestamptz - interval '1 day'
              AND preference IS DISTINCT FROM 'no_answer'
            """
    }

    /// The app's refund requests, and an attention line when one is within 2 hours of its deadline unanswered or
    /// one was missed in the last day. Requests without consent, or that a rule chose not to answer, wait for
    /// nothing an operator can give and are not counted.
    static func gatherRefundRequests(
        into status: inout AppStatus, attention: inout [String], now: Date, on connection: PostgresConnection
    ) throws {
        let row = try connection.query(
            """
            SELECT count(*) FILTER (WHERE open AND deadline > $2)::int AS waiting,
                   min(deadline) FILTER (WHERE open AND deadline > $2) AS nearest,
                   count(*) FILTER (WHERE missed)::int AS missed
            FROM (\(countedRequestsSQL(now: "$2", app: "$1"))) r
            """, [status.id, now])[0]
        let waiting: Int = try row.decode("waiting")
        let missed: Int = try row.decode("missed")
        let nearest: Date? = try row.decodeIfPresent("nearest")
        guard waiting > 0 || missed > 0 || status.lastRuns.contains(where: { $0.job == "refund_requests" }) else {
            return
        }
        status.refundRequests = RefundRequestStatus(waiting: waiting, nearestDeadline: nearest, missedLastDay: missed)
        if let nearest, nearest.timeIntervalSince(now) < refundRequestWarning {
            attention.append(
                "\(status.id): a refund request is unanswered \(Int(nearest.timeIntervalSince(now) / 60)) min before "
                    + "its deadline; see the Runbook, \"A request about to be missed\"")
        }
        if missed > 0 {
            attention.append("\(status.id): \(missed) refund requests missed their deadline in the last day")
        }
    }
}
