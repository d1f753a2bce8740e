import Foundation
import Postgres

/// What `status` says of an app's refund requests.
public struct RefundRequestStatus: Codable, Sendable, Equatable {
    /// Requests not answered yet whose deadline has not passed (undecided or without facts).
    public var waiting: Int
    /// The nearest deadline among them.
    public var nearestDeadline: Date?
    /// Requests missed in the last 24 hours (a `no_answer` rule's are not counted): recorded `missed`, or never
    /// decided before their deadline (the job did not run).
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

    /// A request of `r` missed by `$now`: recorded `missed` by the job, or still undecided past its deadline (the job
    /// stopped running: nothing else would ever record it).
    static func missedSQL(now: String) -> String {
        "(r.answer = 'missed' OR (r.answer IS NULL AND r.deadline <= \(now)))"
    }

    /// The app's refund requests, and an attention line when one is within 2 hours of its deadline unanswered or
    /// one was missed in the last day. Requests without consent, or that a rule chose not to answer, wait for
    /// nothing an operator can give and are not counted.
    static func gatherRefundRequests(
        into status: inout AppStatus, attention: inout [String], now: Date, on connection: PostgresConnection
    ) throws {
        let row = try connection.query(
            """
            SELECT count(*) FILTER (WHERE open)::int AS waiting, min(deadline) FILTER (WHERE open) AS nearest,
                   count(*) FILTER (WHERE \(missedSQL(now: "$2")))::int AS missed
            FROM (SELECT deadline, answer, (answer IS NULL OR answer = 'no_facts') AND deadline > $2 AS open
                  FROM refund_request
                  WHERE app_id = $1 AND preference IS DISTINCT FROM 'no_answer'
                    AND deadline > $2::timestamptz - interval '1 day') r
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
