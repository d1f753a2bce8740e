import Postgres

/// What an app's night could not cover yet, said at the end of its summary line: refunds still waiting for the
/// store's amount, Google orders known but not yet re-read for refunds made without revocation, Apple customers
/// still queued. Each is asked again on the next nights; none is an error.
public struct NightlyCoverage: Sendable, Equatable {
    /// Google refunds Google has not settled yet (`pending`).
    public var pending = 0
    /// Refunds without the store's amount and not pending (not asked yet, no permission, order not found, estimated).
    public var withoutStoreAmount = 0
    /// Google subscriptions' current orders never read from the Orders API.
    public var knownOrdersUnread = 0
    /// Apple customers named by a notification or a backfill whose refund history is not read yet.
    public var customersQueued = 0

    /// Counts what is left for `app`.
    public static func measure(_ app: AppConfig, on connection: PostgresConnection) throws -> NightlyCoverage {
        var coverage = NightlyCoverage()
        let amounts = try connection.query(
            """
            SELECT count(*) FILTER (WHERE amount_note = 'pending') AS pending,
                   count(*) FILTER (WHERE (gross_amount IS NULL OR amount_source = 'configured')
                                    AND refund_type <> 'family_revoke' AND amount_note IS DISTINCT FROM 'pending')
                       AS without_amount
            FROM refund WHERE app_id = $1
            """, [app.id])[0]
        coverage.pending = try amounts.decode("pending")
        coverage.withoutStoreAmount = try amounts.decode("without_amount")
        switch app.platform {
        case .google:
            coverage.knownOrdersUnread = try connection.query(
                """
                SELECT count(*) AS n FROM subscription s
                WHERE s.app_id = $1 AND s.current_order_id LIKE 'GPA.%'
                  AND NOT EXISTS (SELECT 1 FROM google_order o WHERE o.app_id = $1 AND o.order_id = s.current_order_id)
                  AND NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = s.current_order_id)
                """, [app.id])[0].decode("n")
        case .apple:
            coverage.customersQueued = try connection.query(
                "SELECT count(*) AS n FROM apple_refund_cursor WHERE app_id = $1 AND queued_at IS NOT NULL", [app.id]
            )[0].decode("n")
        }
        return coverage
    }

    /// `not yet covered: 3 refunds pending at the store, ...`, or nil when nothing is left.
    public var line: String? {
        var parts: [String] = []
        if pending > 0 { parts.append("\(pending) refunds pending at the store") }
        if withoutStoreAmount > 0 { parts.append("\(withoutStoreAmount) refunds without the store's amount") }
        if knownOrdersUnread > 0 { parts.append("\(knownOrdersUnread) known orders not re-read yet") }
        if customersQueued > 0 { parts.append("\(customersQueued) customers' refund history not read yet") }
        return parts.isEmpty ? nil : "not yet covered (asked again next night): " + parts.joined(separator: ", ")
    }
}
