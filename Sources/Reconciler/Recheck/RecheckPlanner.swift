import Foundation
import Postgres

/// Which subscriptions the recheck job asks the stores about, and the query that lists them.
///
/// A subscription is due when
/// 1. its expiry lies in `[now − lag, now + lead]` and it was not checked since the expiry last moved (index
///    `subscription_recheck_due`): new rows, and rows whose expiry changed;
/// 2. its expiry lies in that window and it was last checked before the expiry: once after the expiry passed
///    (renewed or lapsed?) and once when the expiry came within the lead (auto-renew off, a downgrade scheduled)
///    (index `subscription_recheck_expiring`);
/// 3. it is in a watched state (grace, billing retry, on hold, paused, pending) or flagged by a refund job, and was
///    not checked in the last ``watchInterval`` unless flagged after that check (index `subscription_recheck_watch`).
/// 4. a store said it changed (a Google subscription notification queued it in `recheck_request`,
///    ``RecheckRequests``): asked whatever its expiry, until a check after the request clears it.
///
/// Each of the first three parts is written so that its `WHERE` clause implies its partial index's predicate, so on a
/// table of any size they read the indexes' ranges, never the table as a whole; the indexes include the columns the
/// parts return and filter on, so the scans are index-only (migration 0004). The fourth probes `subscription` by key
/// per queued request.
public struct RecheckPlanner: Sendable, Equatable {
    /// The bounds of one run.
    public struct Window: Sendable, Equatable {
        /// The run's now.
        public var now: Date
        /// Earliest expiry asked about: now − lag.
        public var from: Date
        /// Latest expiry asked about: now + lead.
        public var to: Date
        /// Watched subscriptions checked after this are not asked again yet.
        public var watchCutoff: Date
    }

    /// One due subscription and when it was last checked (microseconds since 1970, nil if never), so that a claim
    /// can tell whether anyone checked it since it was listed.
    public struct Due: Sendable, Equatable {
        /// `subscription.id`.
        public var id: Int64
        /// `last_checked_at` as listed.
        public var seenMicros: Int64?
    }

    /// How far ahead of expiry to start asking.
    public var lead: TimeInterval
    /// How long after expiry to keep asking.
    public var lag: TimeInterval
    /// How often at most a watched subscription is asked about.
    public var watchInterval: TimeInterval

    /// Creates a planner.
    public init(lead: TimeInterval, lag: TimeInterval, watchInterval: TimeInterval = 12 * 3600) {
        self.lead = lead
        self.lag = lag
        self.watchInterval = watchInterval
    }

    /// The bounds for a run at `now`.
    public func window(now: Date) -> Window {
        Window(
            now: now, from: now.addingTimeInterval(-lag), to: now.addingTimeInterval(lead),
            watchCutoff: now.addingTimeInterval(-watchInterval))
    }

    /// Lists the due subscriptions of an app, in id order.
    public func due(app: String, now: Date, on connection: PostgresConnection) throws -> [Due] {
        let window = window(now: now)
        let rows = try connection.query(Self.dueSQL, parameters(app: app, window: window)).map { row in
            Due(id: try row.decode("id"), seenMicros: try row.decodeIfPresent("seen_us"))
        }
        // The parts overlap (a watched row can also be near expiry); a row listed twice is the same row, so sorting
        // and dropping repeats here is the server's UNION without its sort of the whole set (which spills to disk
        // at a few hundred thousand rows).
        var due = rows.sorted { $0.id < $1.id }
        var kept = 0
        for index in due.indices where kept == 0 || due[index].id != due[kept - 1].id {
            due[kept] = due[index]
            kept += 1
        }
        due.removeLast(due.count - kept)
        return due
    }

    /// The parameters of ``dueSQL``.
    public func parameters(app: String, window: Window) -> [any PostgresEncodable] {
        [app, window.from, window.to, window.now, lead, window.watchCutoff]
    }

    /// $1 app, $2 now − lag, $3 now + lead, $4 now, $5 lead in seconds, $6 the watch cutoff. Rows in more than
    /// one part come once from each (``due(app:now:on:)`` drops the repeats).
    public static let dueSQL = """
        SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us
        FROM subscription
        WHERE app_id = $1 AND expires_at BETWEEN $2 AND $3
          AND (last_checked_at IS NULL OR last_checked_at < expiry_changed_at)
        UNION ALL
        SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us
        FROM subscription
        WHERE app_id = $1 AND expires_at BETWEEN $2 AND $3
          AND last_checked_at < expires_at
          AND (expires_at <= $4 OR last_checked_at < expires_at - make_interval(secs => $5))
        UNION ALL
        SELECT id, (extract(epoch FROM last_checked_at) * 1000000)::bigint AS seen_us
        FROM subscription
        WHERE app_id = $1
          AND (state IN ('grace', 'billing_retry', 'on_hold', 'paused', 'pending') OR flagged_at IS NOT NULL)
          AND (last_checked_at IS NULL OR last_checked_at < $6 OR flagged_at > last_checked_at)
        UNION ALL
        \(RecheckRequests.dueSQL)
        """
}
