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

/// Google's `orders.reviewrefund` request body, exactly as sent (no usage events: storerecon keeps no IP addresses
/// or locations).
///
/// [Google documentation](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/reviewrefund)
public struct GoogleReviewRefundBody: Encodable, Sendable, Equatable {
    /// The token of the notification that asked.
    public var pendingRefundToken: String
    /// Whether a sample, trial or description was offered.
    public var sampleContentProvided: Bool
    /// `DECLINE`, `APPROVE` or `NEUTRAL`.
    public var refundPreference: String
    /// Milliunits 0...100000, when known.
    public var consumptionPercentageMilliunits: Int?

    enum CodingKeys: String, CodingKey {
        case pendingRefundToken, sampleContentProvided, refundPreference, consumptionPercentageMilliunits
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pendingRefundToken, forKey: .pendingRefundToken)
        try container.encode(sampleContentProvided, forKey: .sampleContentProvided)
        try container.encode(refundPreference, forKey: .refundPreference)
        try container.encodeIfPresent(consumptionPercentageMilliunits, forKey: .consumptionPercentageMilliunits)
    }
}

/// The body of an answer to either store.
public enum RefundAnswerBody: Sendable, Equatable {
    case apple(AppleConsumptionBody)
    case google(GoogleReviewRefundBody)

    /// The JSON sent (keys sorted, so the stored copy and the wire bytes are the same text).
    public var json: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch self {
        case .apple(let body): return (try? encoder.encode(body)) ?? Data()
        case .google(let body): return (try? encoder.encode(body)) ?? Data()
        }
    }
}
