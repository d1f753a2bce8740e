import Foundation
import Logging
import Postgres
import Reconciler

extension MetricsFile {
    /// The refund-request gauges, per app, as `status` counts them.
    static let refundRequestFamilies: [(name: String, help: String, perApp: Bool)] = [
        (
            "storerecon_refund_requests_waiting",
            "Refund requests not answered yet whose deadline has not passed (undecided or without facts).", true
        ),
        (
            "storerecon_refund_requests_nearest_deadline_timestamp_seconds",
            "The nearest deadline among the waiting refund requests (Unix time; no sample when none wait).", true
        ),
        (
            "storerecon_refund_requests_missed_last_day", "Refund requests that missed their deadline in the last day.",
            true
        ),
    ]

    /// The refund-request samples by family, every app present, or nil when the database cannot be read (the
    /// previous file's samples are then kept).
    func refundRequestSamples(conninfo: String, now: Date) -> [String: [String]]? {
        do {
            let connection = try PostgresConnection(conninfo: conninfo)
            defer { connection.close() }
            return Self.refundRequestSamples(try RefundRequestStatus.all(now: now, on: connection))
        } catch {
            logger.debug(
                "--metrics-file: refund-request gauges kept from the previous file: \(ExitStatus.classify(error).line)")
            return nil
        }
    }

    /// The samples of `statuses`, by family.
    static func refundRequestSamples(_ statuses: [(app: String, status: RefundRequestStatus)]) -> [String: [String]] {
        var samples: [String: [String]] = [:]
        for family in refundRequestFamilies { samples[family.name] = [] }
        for (app, status) in statuses {
            let labels = Self.labels([("app", app)])
            samples["storerecon_refund_requests_waiting"]!.append(
                "storerecon_refund_requests_waiting\(labels) \(status.waiting)")
            if let nearest = status.nearestDeadline {
                samples["storerecon_refund_requests_nearest_deadline_timestamp_seconds"]!.append(
                    "storerecon_refund_requests_nearest_deadline_timestamp_seconds\(labels) "
                        + "\(Int64(nearest.timeIntervalSince1970))")
            }
            samples["storerecon_refund_requests_missed_last_day"]!.append(
                "storerecon_refund_requests_missed_last_day\(labels) \(status.missedLastDay)")
        }
        return samples
    }
}
