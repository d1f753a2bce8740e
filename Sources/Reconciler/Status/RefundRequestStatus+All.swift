import Foundation
import Postgres

extension RefundRequestStatus {
    /// Every app's refund requests as `status` counts them (waiting, the nearest deadline among them, missed: recorded
    /// in the 24 hours before `now`, or undecided past their deadline), apps in id order, zeros for an app without
    /// requests (so an alert can say `> 0`).
    public static func all(now: Date, on connection: PostgresConnection) throws -> [(
        app: String, status: RefundRequestStatus
    )] {
        try connection.query(
            """
            SELECT a.id AS app_id,
                   count(*) FILTER (WHERE r.open AND r.deadline > $1)::int AS waiting,
                   min(r.deadline) FILTER (WHERE r.open AND r.deadline > $1) AS nearest,
                   count(*) FILTER (WHERE r.missed)::int AS missed
            FROM app a
            LEFT JOIN (\(StatusReport.countedRequestsSQL(now: "$1"))) r ON r.app_id = a.id
            GROUP BY a.id ORDER BY a.id
            """, [now]
        ).map { row in
            (
                try row.decode("app_id"),
                RefundRequestStatus(
                    waiting: try row.decode("waiting"), nearestDeadline: try row.decodeIfPresent("nearest"),
                    missedLastDay: try row.decode("missed"))
            )
        }
    }
}
