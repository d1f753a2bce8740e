import Foundation

/// Apple's `ConsumptionRequest` (Send Consumption Information v2), exactly as sent.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/consumptionrequest)
public struct AppleConsumptionBody: Encodable, Sendable, Equatable {
    /// Always `true` in a body storerecon sends (anything else is Apple's `InvalidCustomerConsentedError`).
    public var customerConsented: Bool
    /// `DELIVERED`, `UNDELIVERED_QUALITY_ISSUE`, ...
    public var deliveryStatus: String
    /// Whether a sample, trial or description was offered.
    public var sampleContentProvided: Bool
    /// Milliunits 0...100000; never for an auto-renewable subscription, 0 when not delivered.
    public var consumptionPercentage: Int?
    /// `DECLINE`, `GRANT_FULL` or `GRANT_PRORATED`; absent for facts only.
    public var refundPreference: String?

    enum CodingKeys: String, CodingKey {
        case customerConsented, deliveryStatus, sampleContentProvided, consumptionPercentage, refundPreference
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(customerConsented, forKey: .customerConsented)
        try container.encode(deliveryStatus, forKey: .deliveryStatus)
        try container.encode(sampleContentProvided, forKey: .sampleContentProvided)
        try container.encodeIfPresent(consumptionPercentage, forKey: .consumptionPercentage)
        try container.encodeIfPresent(refundPreference, forKey: .refundPreference)
    }
}

/// Google's `orders.reviewrefund` request body, exactly as sent. Its usage events (IP addresses, locations) are sent
/// and never stored: the stored copy (``RefundAnswerBody/storedJSON``) has their count in their place.
///
/// [Google documentation](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/reviewrefund)
public struct GoogleReviewRefundBody: Codable, Sendable, Equatable {
    /// The token of the notification that asked.
    public var pendingRefundToken: String
    /// Whether a sample, trial or description was offered.
    public var sampleContentProvided: Bool
    /// `DECLINE`, `APPROVE` or `NEUTRAL`.
    public var refundPreference: String
    /// Milliunits 0...100000, when known.
    public var consumptionPercentageMilliunits: Int?
    /// The backend's usage evidence, most recent first, at most 1000 (omitted when none).
    public var consumptionUsageEvents: [ConsumptionUsageEvent] = []
    /// In the stored copy only: how many usage events were sent in place of them.
    var usageEventsSent: Int?

    enum CodingKeys: String, CodingKey {
        case pendingRefundToken, sampleContentProvided, refundPreference, consumptionPercentageMilliunits
        case consumptionUsageEvents
        case usageEventsSent = "consumptionUsageEventsSent"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pendingRefundToken, forKey: .pendingRefundToken)
        try container.encode(sampleContentProvided, forKey: .sampleContentProvided)
        try container.encode(refundPreference, forKey: .refundPreference)
        try container.encodeIfPresent(consumptionPercentageMilliunits, forKey: .consumptionPercentageMilliunits)
        if !consumptionUsageEvents.isEmpty {
            try container.encode(consumptionUsageEvents, forKey: .consumptionUsageEvents)
        }
        try container.encodeIfPresent(usageEventsSent, forKey: .usageEventsSent)
    }

    /// This body with its usage events replaced by their count, as `refund_request.body_sent` keeps it.
    var redacted: GoogleReviewRefundBody {
        guard !consumptionUsageEvents.isEmpty else { return self }
        var copy = self
        copy.usageEventsSent = consumptionUsageEvents.count
        copy.consumptionUsageEvents = []
        return copy
    }
}

// In an extension, so that the memberwise initializer stays.
extension GoogleReviewRefundBody {
    /// A stored body (``RefundAnswerBody/storedJSON``): its answer without the usage evidence, which is never kept.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pendingRefundToken = try container.decode(String.self, forKey: .pendingRefundToken)
        sampleContentProvided = try container.decode(Bool.self, forKey: .sampleContentProvided)
        refundPreference = try container.decode(String.self, forKey: .refundPreference)
        consumptionPercentageMilliunits = try container.decodeIfPresent(
            Int.self, forKey: .consumptionPercentageMilliunits)
    }
}

/// The body of an answer to either store.
public enum RefundAnswerBody: Sendable, Equatable {
    case apple(AppleConsumptionBody)
    case google(GoogleReviewRefundBody)

    /// The bytes a send carries, and the copy recorded with the request.
    public struct Sent: Sendable, Equatable {
        public var json: Data
        public var storedJSON: Data
    }

    /// The JSON sent (keys sorted, so the stored copy and the wire bytes are the same text).
    public var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch self {
        case .apple(let body): return (try? encoder.encode(body)) ?? Data()
        case .google(let body): return (try? encoder.encode(body)) ?? Data()
        }
    }

    /// The JSON recorded with the request: the body sent, except that Google usage events (personal data) are
    /// replaced by `"consumptionUsageEventsSent": <count>`.
    public var storedJSON: Data {
        switch self {
        case .apple: return json
        case .google(let body): return RefundAnswerBody.google(body.redacted).json
        }
    }

    /// Whether the body carries personal data that must not outlive the answer.
    var carriesUsageEvents: Bool {
        if case .google(let body) = self { return !body.consumptionUsageEvents.isEmpty }
        return false
    }
}
