/// The ledger's vocabulary. Each raw value is what the schema's CHECK constraints allow (`sql/`), so a value the
/// code can write is one the database takes, and a report reads back the same cases.

/// The store a refund came from (`refund.platform`, `app.platform`).
public enum RefundPlatform: String, Sendable, CaseIterable, Codable {
    case apple, google
}

/// What kind of refund a ledger row is (`refund.refund_type`).
public enum RefundKind: String, Sendable, CaseIterable, Codable {
    /// The whole order or transaction.
    case full
    /// Apple: a share of the price (`revocationPercentage`).
    case prorated
    /// Google: some units of an order (`voidedQuantity`).
    case partialQuantity = "partial_quantity"
    /// Google: an amount given back without revocation (an order's processed partial refund event).
    case partialAmount = "partial_amount"
    /// Apple: a family member's access revoked; no money moved.
    case familyRevoke = "family_revoke"
    /// A revocation type this version does not know (its raw value stays in the payload).
    case unknown
}

/// Where a row's amount comes from (`refund.amount_source`).
public enum AmountSource: String, Sendable, CaseIterable, Codable {
    /// What the store said it refunded.
    case store
    /// Estimated from the configuration's product prices.
    case configured
}

/// Why a row's amount is missing or provisional (`refund.amount_note`).
public enum AmountNote: String, Sendable, CaseIterable, Codable {
    /// Google has not processed the refund yet: asked again until settled.
    case pending
    /// The Orders API does not know the order.
    case orderNotFound = "order_not_found"
    /// The service account cannot read orders (Play Console "View financial data").
    case noPermission = "no_permission"
    /// No money moved (Apple family revoke).
    case familyRevoke = "family_revoke"
    /// The order's history has no refund event for this refund.
    case noRefundEvent = "no_refund_event"
    /// The store's own figures refund more than the order charged: the order is in the quarantine.
    case overRefunded = "over_refunded"
    /// An estimate was wanted but no configured price is in the sale's currency.
    case noConfiguredPrice = "no_configured_price"
}

/// The job (and so the mapping) a quarantined row belongs to (`quarantine.job`).
public enum QuarantineJob: String, Sendable, CaseIterable, Codable {
    /// A row of a Google Voided Purchases page (raw: the row's JSON object).
    case googleVoided = "google_voided"
    /// A Google order whose figures cannot be right (raw: the order's JSON).
    case googleOrders = "google_orders"
    /// A signed transaction of an Apple Refund History page (raw: the JWS).
    case appleRefunds = "apple_refunds"
    /// A notification of an Apple Notification History page (raw: the signed payload, a JWS).
    case appleNotifications = "apple_notifications"
    /// A notification `run refund-requests` read from Notification History (a `CONSUMPTION_REQUEST`, `REFUND` or
    /// `REFUND_DECLINED`; raw: the signed payload, a JWS).
    case appleRefundRequests = "apple_refund_requests"
}

/// How a quarantined row ended (`quarantine.resolution`).
public enum QuarantineResolution: String, Sendable, CaseIterable, Codable {
    /// A retry stored it, or a copy of it landed.
    case landed
    /// An operator abandoned it, with a reason.
    case dropped
}

/// What became of asking the Orders API for an order (`google_order.status`).
public enum GoogleOrderStatus: String, Sendable, CaseIterable, Codable {
    /// Fetched.
    case ok
    /// Google answered 404 for it alone.
    case notFound = "not_found"
    /// The service account lacks the financial permission (403).
    case noPermission = "no_permission"
}
