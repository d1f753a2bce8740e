/// The store that asked about a refund (`refund_request.store`).
public enum RequestingStore: String, Sendable, Codable, CaseIterable {
    /// Apple: a `CONSUMPTION_REQUEST` notification, answered with Send Consumption Information v2.
    case apple
    /// Google: a `pendingRefundReviewNotification`, answered with `orders.reviewrefund`.
    case google

    /// How long the store waits for an answer after asking: Apple 12 hours, Google 24 hours.
    public var answerWindow: Double { self == .apple ? 12 * 3600 : 24 * 3600 }
}

/// What became of a request on storerecon's side (`refund_request.answer`, its CHECK).
public enum RefundRequestAnswer: String, Sendable, Codable, CaseIterable {
    /// The store accepted the answer in time.
    case answered
    /// The deadline passed before an answer was sent.
    case missed
    /// No facts for the purchase (decided again on each run until the deadline).
    case noFacts = "no_facts"
    /// Apple: the customer did not consent (decided again on each run until the deadline).
    case noConsent = "no_consent"
    /// The store does not take an answer for this purchase (family-shared, an unsupported type).
    case notSupported = "not_supported"
    /// The store refused the answer; its error code is kept.
    case failed

    /// Whether a later run may still change it (facts or consent can arrive before the deadline).
    public var isProvisional: Bool { self == .noFacts || self == .noConsent }
}

/// What the store decided, once known (`refund_request.decision`).
public enum RefundRequestDecision: String, Sendable, Codable, CaseIterable {
    /// The customer was refunded (Apple `REFUND`, Google: the order voided).
    case refunded
    /// The store declined the refund (Apple `REFUND_DECLINED`).
    case declined
    /// Not known yet.
    case pending
}

/// The answer a rule prefers (`refundRequests.rules[].prefer`, `refund_request.preference`).
public enum RefundPreference: String, Sendable, Codable, CaseIterable {
    /// Apple `DECLINE`, Google `DECLINE`.
    case decline
    /// Apple `GRANT_FULL`, Google `APPROVE`.
    case grant
    /// Apple `GRANT_PRORATED`; Google has none and gets `APPROVE`.
    case grantProrated = "grant_prorated"
    /// The facts without a preference; Google `NEUTRAL`.
    case dataOnly = "data_only"
    /// Send nothing.
    case noAnswer = "no_answer"
}

/// Whether the purchase reached the customer, as the app backend says (`consumption_fact.delivery_status`).
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable {
    case delivered
    case undeliveredQualityIssue = "undelivered_quality_issue"
    case undeliveredWrongItem = "undelivered_wrong_item"
    case undeliveredServerOutage = "undelivered_server_outage"
    case undeliveredOther = "undelivered_other"

    /// Apple's `deliveryStatus` value.
    public var appleValue: String { rawValue.uppercased() }
}

/// The kind of purchase a request is about, as the store names it.
public enum PurchaseKind: Sendable, Equatable {
    case autoRenewable
    case nonRenewing
    case consumable
    case nonConsumable
    /// A type the store sent that storerecon does not know (kept raw).
    case unknown(String)

    /// Apple's transaction `type`.
    public init(appleType: String?) {
        switch appleType {
        case "Auto-Renewable Subscription": self = .autoRenewable
        case "Non-Renewing Subscription": self = .nonRenewing
        case "Consumable": self = .consumable
        case "Non-Consumable": self = .nonConsumable
        default: self = .unknown(appleType ?? "")
        }
    }
}
