import Foundation

/// Overrides of the stores' published limits for one app. Unset values take the published defaults; Apple
/// sandbox apps get 10 % of them.
public struct LimitsConfig: Decodable, Sendable, Equatable {
    /// Google voided purchases: queries per US-Pacific day (published: 6000).
    public var voidedPerDay: Int?
    /// Google voided purchases: queries in any 30 seconds (published: 30).
    public var voidedPer30Seconds: Int?
    /// Google subscriptionsv2.get: queries per minute (published: 3000).
    public var subscriptionsPerMinute: Int?
    /// Google orders.get / orders.batchget: queries per minute (default 2940: the "Orders" bucket's 3000 less the
    /// 60 a minute Voided Purchases may take of it).
    public var ordersPerMinute: Int?
    /// Google Play Developer API: queries of orders.* per US-Pacific day (default 200,000).
    public var developerApiPerDay: Int?
    /// Apple Get Refund History: requests per second (published: 10).
    public var refundHistoryPerSecond: Double?
    /// Apple Get Notification History: requests per second (published: 50).
    public var notificationHistoryPerSecond: Double?
    /// Apple Get All Subscription Statuses: requests per second (published: 50).
    public var subscriptionStatusPerSecond: Double?
    /// Apple Get Transaction History: requests per second (published: 50).
    public var transactionHistoryPerSecond: Double?
    /// The latency allowance the quota gate adds to every window of this app's limits, in milliseconds (default
    /// 250, never more than 5 % of a window; see `RateLimit.defaultMargin(for:)`). Widen it when the store
    /// throttles calls the gate granted (`storerecon_store_calls{api="….throttled"}`).
    public var quotaMarginMs: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case voidedPerDay, voidedPer30Seconds, subscriptionsPerMinute, ordersPerMinute, developerApiPerDay
        case refundHistoryPerSecond, notificationHistoryPerSecond, subscriptionStatusPerSecond,
            transactionHistoryPerSecond, quotaMarginMs
    }

    /// No overrides.
    public init() {}

    /// The keys given that only the other platform's apps have (Google's for an Apple app and the reverse): each
    /// would be accepted and never used.
    func keys(notOf platform: AppConfig.Platform) -> [String] {
        let google: [(CodingKeys, Bool)] = [
            (.voidedPerDay, voidedPerDay != nil), (.voidedPer30Seconds, voidedPer30Seconds != nil),
            (.subscriptionsPerMinute, subscriptionsPerMinute != nil), (.ordersPerMinute, ordersPerMinute != nil),
            (.developerApiPerDay, developerApiPerDay != nil),
        ]
        let apple: [(CodingKeys, Bool)] = [
            (.refundHistoryPerSecond, refundHistoryPerSecond != nil),
            (.notificationHistoryPerSecond, notificationHistoryPerSecond != nil),
            (.subscriptionStatusPerSecond, subscriptionStatusPerSecond != nil),
            (.transactionHistoryPerSecond, transactionHistoryPerSecond != nil),
        ]
        return (platform == .apple ? google : apple).filter(\.1).map(\.0.rawValue)
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        voidedPerDay = try container.decodeIfPresent(Int.self, forKey: .voidedPerDay)
        voidedPer30Seconds = try container.decodeIfPresent(Int.self, forKey: .voidedPer30Seconds)
        subscriptionsPerMinute = try container.decodeIfPresent(Int.self, forKey: .subscriptionsPerMinute)
        ordersPerMinute = try container.decodeIfPresent(Int.self, forKey: .ordersPerMinute)
        developerApiPerDay = try container.decodeIfPresent(Int.self, forKey: .developerApiPerDay)
        refundHistoryPerSecond = try container.decodeIfPresent(Double.self, forKey: .refundHistoryPerSecond)
        notificationHistoryPerSecond = try container.decodeIfPresent(
            Double.self, forKey: .notificationHistoryPerSecond)
        subscriptionStatusPerSecond = try container.decodeIfPresent(Double.self, forKey: .subscriptionStatusPerSecond)
        transactionHistoryPerSecond = try container.decodeIfPresent(Double.self, forKey: .transactionHistoryPerSecond)
        quotaMarginMs = try container.decodeIfPresent(Int.self, forKey: .quotaMarginMs)
        // Checked here, with the key's path in the message: a limiter built on zero calls or a negative rate would
        // stop the process instead.
        let counts: [(CodingKeys, Int?)] = [
            (.voidedPerDay, voidedPerDay), (.voidedPer30Seconds, voidedPer30Seconds),
            (.subscriptionsPerMinute, subscriptionsPerMinute), (.ordersPerMinute, ordersPerMinute),
            (.developerApiPerDay, developerApiPerDay),
        ]
        for (key, value) in counts where value.map({ $0 < 1 }) ?? false {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "expected a whole number of calls, at least 1")
        }
        let rates: [(CodingKeys, Double?)] = [
            (.refundHistoryPerSecond, refundHistoryPerSecond),
            (.notificationHistoryPerSecond, notificationHistoryPerSecond),
            (.subscriptionStatusPerSecond, subscriptionStatusPerSecond),
            (.transactionHistoryPerSecond, transactionHistoryPerSecond),
        ]
        for (key, value) in rates where value.map({ !($0 > 0 && $0 <= 1_000_000) }) ?? false {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "expected requests per second above 0")
        }
        if let quotaMarginMs, !(0...10_000).contains(quotaMarginMs) {
            throw DecodingError.dataCorruptedError(
                forKey: .quotaMarginMs, in: container, debugDescription: "expected milliseconds from 0 to 10000")
        }
    }
}
