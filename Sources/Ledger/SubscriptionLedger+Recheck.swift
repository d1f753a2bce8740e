import Foundation
import Postgres

/// The recheck's writes: leases on due subscriptions, what a status answer said, and the transitions it recorded.
extension SubscriptionLedger {
    /// What a status answer says of a subscription, as ``record(_:on:)`` writes it.
    public struct Observed: Sendable {
        /// `subscription.id`.
        public var id: Int64
        /// The lifecycle state (`subscription.state`).
        public var state: String
        public var storeState: String?
        public var entitled: Bool
        public var expiresAt: Date?
        public var autoRenew: Bool?
        public var autoRenewProductId: String?
        /// Kept when `nil`, as are ``orderId`` and ``environment``.
        public var productId: String?
        public var orderId: String?
        public var environment: String?
        public var linkedStoreId: String?
        public var chainRootStoreId: String?
        /// Whether the expiry moved (`expiry_changed_at` becomes ``checkedAt``).
        public var expiryMoved: Bool
        public var checkedAt: Date

        /// An answer about subscription `id`, checked at `checkedAt`.
        public init(
            id: Int64, state: String, storeState: String?, entitled: Bool, expiresAt: Date?, autoRenew: Bool?,
            autoRenewProductId: String?, productId: String?, orderId: String?, environment: String?,
            linkedStoreId: String?, chainRootStoreId: String?, expiryMoved: Bool, checkedAt: Date
        ) {
            (self.id, self.state, self.storeState, self.entitled) = (id, state, storeState, entitled)
            (self.expiresAt, self.autoRenew, self.autoRenewProductId) = (expiresAt, autoRenew, autoRenewProductId)
            (self.productId, self.orderId, self.environment) = (productId, orderId, environment)
            (self.linkedStoreId, self.chainRootStoreId) = (linkedStoreId, chainRootStoreId)
            (self.expiryMoved, self.checkedAt) = (expiryMoved, checkedAt)
        }
    }

    /// One row of `subscription_transition` from the recheck.
    public struct Transition: Sendable {
        public var subscriptionId: Int64
        public var oldState: String
        public var newState: String
        public var classification: String
        public var oldExpiresAt: Date?
        public var newExpiresAt: Date?
        public var oldProductId: String?
        public var newProductId: String?
        public var orderId: String?
        public var runId: Int64?
        public var observedAt: Date
        /// A JSON object.
        public var detail: Data

        /// A transition of subscription `subscriptionId`.
        public init(
            subscriptionId: Int64, oldState: String, newState: String, classification: String, oldExpiresAt: Date?,
            newExpiresAt: Date?, oldProductId: String?, newProductId: String?, orderId: String?, runId: Int64?,
            observedAt: Date, detail: Data
        ) {
            (self.subscriptionId, self.oldState, self.newState) = (subscriptionId, oldState, newState)
            (self.classification, self.oldExpiresAt, self.newExpiresAt) = (classification, oldExpiresAt, newExpiresAt)
            (self.oldProductId, self.newProductId, self.orderId) = (oldProductId, newProductId, orderId)
            (self.runId, self.observedAt, self.detail) = (runId, observedAt, detail)
        }
    }

    /// Leases the listed subscriptions (ids with the `last_checked_at` they were listed with, in microseconds) that
    /// nobody checked since and nobody holds a lease on; rows another process has locked are skipped, not waited
    /// for. Returns the claimed rows' `columns` (an SQL select list of `subscription` columns).
    public static func claim(
        ids: [Int64], seenMicros: [Int64?], now: Date, leaseUntil: Date, claimer: String, returning columns: String,
        on connection: PostgresConnection
    ) throws -> PostgresRows {
        let returning = columns.split(separator: ",").map {
            "s.\($0.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
        return try connection.query(
            """
            WITH wanted AS (
                SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS w(id, seen_us)
            ), claimable AS (
                SELECT s.id FROM subscription s JOIN wanted w ON s.id = w.id
                WHERE (extract(epoch FROM s.last_checked_at) * 1000000)::bigint IS NOT DISTINCT FROM w.seen_us
                  AND (s.claimed_until IS NULL OR s.claimed_until <= $3
                       OR (s.claimed_backend IS NOT NULL
                           AND \(ClaimLiveness.claimerGone(claimedAt: "s.claimed_at", backend: "s.claimed_backend"))))
                ORDER BY s.id
                FOR UPDATE OF s SKIP LOCKED
            )
            UPDATE subscription s SET claimed_until = $4, claimed_by = $5, claimed_backend = pg_backend_pid(),
                claimed_at = now()
            FROM claimable c WHERE s.id = c.id
            RETURNING \(returning.joined(separator: ", "))
            """,
            [
                PostgresTextArray(ids.map { String($0) }),
                PostgresNullableTextArray(seenMicros.map { $0.map(String.init) }), now, leaseUntil, claimer,
            ])
    }

    /// Gives back leases `claimer` holds on these subscriptions.
    public static func release(_ ids: [Int64], claimer: String, on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute(
            "UPDATE subscription SET claimed_until = NULL, claimed_by = NULL WHERE id = ANY($1::bigint[]) AND claimed_by = $2",
            [PostgresTextArray(ids.map(String.init)), claimer])
    }

    /// A state this version does not know: kept raw; the lease stays, held by no session now, so it runs out by
    /// time.
    public static func keepUnknownState(_ id: Int64, raw: String, on connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE subscription SET store_state = $2, claimed_backend = NULL, updated_at = now() WHERE id = $1",
            [id, raw])
    }

    /// An answer not written (it predates what the ledger learned meanwhile): flagged, so the next run asks again;
    /// the lease stays, held by no session now, so no one asks again this run.
    public static func askAgain(_ id: Int64, reason: String, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE subscription SET flagged_at = now(), flag_reason = $2, claimed_backend = NULL, updated_at = now()
            WHERE id = $1
            """, [id, reason])
    }

    /// An unusable answer: nothing changes but the lease, which stays, held by no session now.
    public static func dropBackend(_ id: Int64, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE subscription SET claimed_backend = NULL WHERE id = $1", [id])
    }

    /// Writes what a status answer said; the lease and any flag end. An answer that still grants access past its own
    /// expiry (the store has not settled the renewal yet) is flagged `entitled_past_expiry` instead: asked again
    /// every watch interval until an answer with a later expiry, or without access, ends it; otherwise the row,
    /// checked after its expiry, would never be due again and would grant access for good.
    public static func record(_ observed: Observed, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE subscription SET
                state = $2, store_state = $3, entitled = $4, expires_at = $5, auto_renew = $6,
                auto_renew_product_id = $7, product_id = coalesce($8, product_id),
                current_order_id = coalesce($9, current_order_id), environment = coalesce($10, environment),
                linked_store_id = $11, chain_root_store_id = $12,
                expiry_changed_at = CASE WHEN $13 THEN $14 ELSE expiry_changed_at END,
                last_checked_at = $14, missing_since = NULL,
                flagged_at = CASE WHEN $4 AND $5 <= $14 THEN $14 END,
                flag_reason = CASE WHEN $4 AND $5 <= $14 THEN 'entitled_past_expiry' END,
                claimed_until = NULL, claimed_by = NULL, updated_at = now()
            WHERE id = $1
            """,
            [
                observed.id, observed.state, observed.storeState, observed.entitled, observed.expiresAt,
                observed.autoRenew, observed.autoRenewProductId, observed.productId, observed.orderId,
                observed.environment, observed.linkedStoreId, observed.chainRootStoreId, observed.expiryMoved,
                observed.checkedAt,
            ])
    }

    /// The store says the subscription does not exist: not entitled, missing since `now` (or earlier).
    public static func recordMissing(_ id: Int64, now: Date, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE subscription SET state = 'missing', entitled = false,
                missing_since = coalesce(missing_since, $2), last_checked_at = $2, flagged_at = NULL,
                flag_reason = NULL, claimed_until = NULL, claimed_by = NULL, updated_at = now()
            WHERE id = $1
            """, [id, now])
    }

    /// Records a transition the recheck observed (source `recheck`).
    public static func insert(_ transition: Transition, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO subscription_transition (subscription_id, old_state, new_state, classification, old_expires_at,
                                                 new_expires_at, old_product_id, new_product_id, order_id, source,
                                                 job_run_id, observed_at, detail)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'recheck', $10, $11, $12::jsonb)
            """,
            [
                transition.subscriptionId, transition.oldState, transition.newState, transition.classification,
                transition.oldExpiresAt, transition.newExpiresAt, transition.oldProductId, transition.newProductId,
                transition.orderId, transition.runId, transition.observedAt, PostgresJSON(data: transition.detail),
            ])
    }

    /// A token storerecon never saw, named as replaced by `successor`: created already replaced, the root of its
    /// chain, so a refund of one of its orders is still attributed to the chain.
    public static func insertReplaced(
        app: String, storeId: String, productId: String, by successor: String, now: Date,
        on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, state, entitled, replaced_by_store_id,
                                      chain_root_store_id, expiry_changed_at)
            VALUES ($1, $2, $3, 'replaced', false, $4, $2, $5)
            ON CONFLICT (app_id, store_id) DO NOTHING
            """, [app, storeId, productId, successor, now])
    }

    /// Subscription `id` is replaced by token `successor`, in the chain rooted at `root`.
    public static func markReplaced(
        _ id: Int64, by successor: String, root: String, on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            UPDATE subscription SET state = 'replaced', entitled = false, replaced_by_store_id = $2,
                chain_root_store_id = $3, updated_at = now()
            WHERE id = $1
            """, [id, successor, root])
    }

    /// A token never answered for yet that `successor` names: it stops granting and joins the chain at once; its
    /// state waits for its own answer (flagged since `now`, so it is due soon).
    public static func markUnanswered(
        _ id: Int64, replacedBy successor: String, root: String, now: Date, on connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            UPDATE subscription SET entitled = false, replaced_by_store_id = $2, chain_root_store_id = $3,
                flagged_at = coalesce(flagged_at, $4), flag_reason = coalesce(flag_reason, 'replaced'),
                updated_at = now()
            WHERE id = $1
            """, [id, successor, root, now])
    }
}
