import Foundation
import Ledger
import Postgres
import RateLimiting

/// What `storerecon status` shows: whether the database answers, whether the schema is current, and per configured
/// app its row counts. Later jobs add checkpoints, gaps, quota use and last runs.
public struct StatusReport: Codable, Sendable, Equatable {
    /// One configured app.
    public struct AppStatus: Codable, Sendable, Equatable {
        /// The app id.
        public var id: String
        /// apple or google.
        public var platform: String
        /// Bundle id or package name.
        public var storeAppId: String
        /// Subscriptions known.
        public var subscriptions: Int
        /// Refunds in the ledger.
        public var refunds: Int
        /// Each job's checkpoint.
        public var checkpoints: [Checkpoint] = []
        /// Windows that could not be fetched, not yet acknowledged.
        public var gaps: [Gap] = []
        /// The last run of each job.
        public var lastRuns: [LastRun] = []
        /// Subscriptions by state and entitlement.
        public var subscriptionStates: [StateCount] = []
        /// Today's (US-Pacific day) store calls per API.
        public var quotaToday: [QuotaUsage] = []
        /// What stops calls now: stores' throttling answers, a spent day, a configured cap reached.
        public var quotaBlocks: [QuotaBlock] = []
        /// Refunds by what is known of their amount, each in one of ``StatusReport/amountBuckets`` (they add up to
        /// `refunds`): `store` (settled), `pending` (Google has not settled it), `estimated` (configured prices),
        /// `unknown`, `family_revoke` (Apple Family Sharing: nothing was charged to the member); and of the unknown
        /// or estimated ones, ``StatusReport/amountNotes``: `order_not_found` and `no_permission`.
        public var refundAmounts: [String: Int] = [:]
        /// Quarantined rows not yet acknowledged (retried into the ledger or dropped), per job.
        public var quarantined: [Quarantine.OpenCount] = []
        /// The last night of the app's nightly jobs, nil before the first.
        public var night: Night?
        /// The newest month with a financial report loaded, tied out (`nil`: no report loaded).
        public var tieOut: TieOutStatus? = nil
        /// The stores' refund requests (`run refund-requests`).
        public var refundRequests: RefundRequestStatus? = nil
    }

    /// A job's checkpoint for an app.
    public struct Checkpoint: Codable, Sendable, Equatable {
        public var job: String
        public var highWater: Date?
        /// Seconds from the high-water mark to now.
        public var behindSeconds: Int?
        public var inFlight: Bool
        public var pagesDone: Int
    }

    /// A window lost for good.
    public struct Gap: Codable, Sendable, Equatable {
        /// `sync_gap.id`, for `storerecon gaps acknowledge ID`.
        public var id: Int64
        public var job: String
        public var from: Date
        public var to: Date
        public var detectedAt: Date
    }

    /// The last run of a job.
    public struct LastRun: Codable, Sendable, Equatable {
        public var job: String
        public var startedAt: Date
        public var finishedAt: Date?
        public var outcome: String?
        public var error: String?
    }

    /// Subscriptions in one state. `unknown` is "not checked yet" (imported, never asked): never counted as
    /// entitled, whatever the import assumed.
    public struct StateCount: Codable, Sendable, Equatable {
        public var state: String
        public var entitled: Bool
        public var count: Int
    }

    /// The refund-amount buckets of ``AppStatus/refundAmounts``: every refund is in exactly one.
    public static let amountBuckets = ["store", "pending", "estimated", "unknown", "family_revoke"]
    /// Why the unknown or estimated amounts are not the store's (counted apart from the buckets).
    public static let amountNotes = ["order_not_found", "no_permission"]

    /// Whether the schema is exactly current.
    public var schemaCurrent: Bool
    /// Pending migrations, if any.
    public var pendingMigrations: [String]
    /// Rows per table.
    public var tableCounts: [String: Int]
    /// Per configured app.
    public var apps: [AppStatus]
    /// Things needing an operator's attention; `status` exits 1 when this is not empty.
    public var attention: [String]

    static let countsQuery = """
        SELECT (SELECT count(*) FROM app) AS app,
               (SELECT count(*) FROM subscription) AS subscription,
               (SELECT count(*) FROM subscription_transition) AS subscription_transition,
               (SELECT count(*) FROM refund) AS refund,
               (SELECT count(*) FROM sync_checkpoint) AS sync_checkpoint,
               (SELECT count(*) FROM sync_gap) AS sync_gap,
               (SELECT count(*) FROM apple_refund_cursor) AS apple_refund_cursor,
               (SELECT count(*) FROM apple_refund_reversal) AS apple_refund_reversal,
               (SELECT count(*) FROM quota_bucket) AS quota_bucket,
               (SELECT count(*) FROM quota_day) AS quota_day,
               (SELECT count(*) FROM job_run) AS job_run
        """

    /// Gathers the report (read-only).
    public static func gather(
        _ configuration: Configuration, on connection: PostgresConnection,
        quotaUsage: (String) async throws -> [QuotaUsage] = { _ in [] },
        quotaBlocks: (String) async throws -> [QuotaBlock] = { _ in [] }
    ) async throws -> StatusReport {
        let pending = try Migrator(connection: connection).pendingNames()
        var report = StatusReport(
            schemaCurrent: pending.isEmpty, pendingMigrations: pending, tableCounts: [:], apps: [], attention: [])
        if !pending.isEmpty {
            report.attention.append("migrations pending: \(pending.joined(separator: ", ")); run storerecon migrate")
            return report
        }
        let counts = try connection.query(countsQuery)
        for column in counts.columns {
            report.tableCounts[column] = try counts[0].decode(column, as: Int.self)
        }
        for app in configuration.apps {
            let row = try connection.query(
                """
                SELECT (SELECT count(*) FROM subscription WHERE app_id = $1) AS subscriptions,
                       (SELECT count(*) FROM refund WHERE app_id = $1) AS refunds
                """, [app.id])[0]
            var status = AppStatus(
                id: app.id, platform: app.platform.rawValue, storeAppId: app.storeAppId,
                subscriptions: try row.decode("subscriptions"), refunds: try row.decode("refunds"))
            try gatherJobs(into: &status, configuration: configuration, on: connection)
            let amounts = try connection.query(
                """
                SELECT count(*) FILTER (WHERE bucket = 'store') AS store,
                       count(*) FILTER (WHERE bucket = 'pending') AS pending,
                       count(*) FILTER (WHERE bucket = 'estimated') AS estimated,
                       count(*) FILTER (WHERE bucket = 'unknown') AS unknown,
                       count(*) FILTER (WHERE bucket = 'family_revoke') AS family_revoke,
                       count(*) FILTER (WHERE amount_note = 'order_not_found') AS order_not_found,
                       count(*) FILTER (WHERE amount_note = 'no_permission') AS no_permission
                FROM (SELECT amount_note,
                             CASE WHEN refund_type = 'family_revoke' THEN 'family_revoke'
                                  WHEN amount_note = 'pending' THEN 'pending'
                                  WHEN amount_source = 'store' THEN 'store'
                                  WHEN amount_source = 'configured' THEN 'estimated'
                                  ELSE 'unknown' END AS bucket
                      FROM refund WHERE app_id = $1) r
                """, [app.id])[0]
            for column in Self.amountBuckets + Self.amountNotes {
                status.refundAmounts[column] = try amounts.decode(column, as: Int.self)
            }
            if let denied = status.refundAmounts["no_permission"], denied > 0 {
                report.attention.append(
                    "\(app.id): \(denied) refunds have no store amount: the service account lacks the Play Console "
                        + "permission 'View financial data' (the Orders API answered 403)")
            }
            // Only the app's own store: an Apple app never calls Google's APIs, whose default limits every app has.
            status.quotaToday = try await quotaUsage(app.id).filter {
                $0.api.rawValue.hasPrefix(app.platform.rawValue + ".")
            }
            status.quotaBlocks = try await quotaBlocks(app.id)
            for checkpoint in status.checkpoints where !checkpoint.job.hasSuffix("_backfill") {
                if let behind = checkpoint.behindSeconds, behind > configuration.status.maxCheckpointAge.seconds {
                    report.attention.append(
                        "\(app.id): \(checkpoint.job) checkpoint is \(behind / 3600) h behind "
                            + "(more than status.maxCheckpointAge \(configuration.status.maxCheckpointAge))")
                }
            }
            for gap in status.gaps {
                report.attention.append(
                    "\(app.id): \(gap.job) gap #\(gap.id) \(PostgresTimestamp.millis(gap.from)) – "
                        + "\(PostgresTimestamp.millis(gap.to)) could not be fetched (older than the store keeps); "
                        + "once dealt with: storerecon gaps acknowledge \(gap.id)")
            }
            status.quarantined = try Quarantine.openCounts(app: app.id, on: connection)
            for open in status.quarantined {
                report.attention.append(
                    "\(app.id): \(open.rows) \(open.job) rows quarantined (the store sent rows that cannot be stored); "
                        + "see storerecon quarantine list --app \(app.id)")
            }
            try gatherRefundRequests(into: &status, attention: &report.attention, now: Date(), on: connection)
            status.night = night(
                of: status.lastRuns, jobs: NightlyPlan.jobs(for: app, configuration: configuration).map(\.name))
            if let late = lateNight(status.night, app: app.id, timeout: configuration.nightly.appTimeout, now: Date()) {
                report.attention.append(late)
            }
            for run in status.lastRuns where run.outcome == "failed" || run.outcome == "config" {
                report.attention.append("\(app.id): last \(run.job) run failed: \(run.error ?? "no error recorded")")
            }
            report.apps.append(status)
        }
        return report
    }

    static func gatherJobs(
        into status: inout AppStatus, configuration: Configuration, on connection: PostgresConnection
    ) throws {
        status.checkpoints = try connection.query(
            """
            SELECT job, high_water, extract(epoch FROM now() - high_water)::bigint AS behind,
                   (page_token IS NOT NULL OR window_start IS NOT NULL) AS in_flight, pages_done
            FROM sync_checkpoint WHERE app_id = $1 ORDER BY job
            """, [status.id]
        ).map { row in
            Checkpoint(
                job: try row.decode("job"), highWater: try row.decodeIfPresent("high_water"),
                behindSeconds: try row.decodeIfPresent("behind"), inFlight: try row.decode("in_flight"),
                pagesDone: try row.decode("pages_done"))
        }
        status.gaps = try connection.query(
            """
            SELECT id, job, gap_from, gap_to, detected_at FROM sync_gap
            WHERE app_id = $1 AND acknowledged_at IS NULL ORDER BY gap_from
            """, [status.id]
        ).map { row in
            Gap(
                id: try row.decode("id"), job: try row.decode("job"), from: try row.decode("gap_from"),
                to: try row.decode("gap_to"),
                detectedAt: try row.decode("detected_at"))
        }
        status.lastRuns = try connection.query(
            """
            SELECT DISTINCT ON (job) job, started_at, finished_at, outcome, error
            FROM job_run WHERE app_id = $1 AND outcome IS DISTINCT FROM 'skipped'
            ORDER BY job, started_at DESC
            """, [status.id]
        ).map { row in
            LastRun(
                job: try row.decode("job"), startedAt: try row.decode("started_at"),
                finishedAt: try row.decodeIfPresent("finished_at"), outcome: try row.decodeIfPresent("outcome"),
                error: try row.decodeIfPresent("error"))
        }
        status.subscriptionStates = try connection.query(
            """
            SELECT state, entitled AND state <> 'unknown' AS entitled, count(*) AS n FROM subscription
            WHERE app_id = $1
            GROUP BY 1, 2 ORDER BY state, entitled DESC
            """, [status.id]
        ).map { row in
            StateCount(state: try row.decode("state"), entitled: try row.decode("entitled"), count: try row.decode("n"))
        }
    }
}
