import Foundation
import Postgres

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
    }

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
               (SELECT count(*) FROM quota_bucket) AS quota_bucket,
               (SELECT count(*) FROM quota_day) AS quota_day,
               (SELECT count(*) FROM job_run) AS job_run
        """

    /// Gathers the report (read-only).
    public static func gather(_ configuration: Configuration, on connection: PostgresConnection) throws -> StatusReport
    {
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
            report.apps.append(
                AppStatus(
                    id: app.id, platform: app.platform.rawValue, storeAppId: app.storeAppId,
                    subscriptions: try row.decode("subscriptions"), refunds: try row.decode("refunds")))
        }
        return report
    }
}
