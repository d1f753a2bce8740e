/// The limits the simulator enforces, per app and endpoint. Defaults are the published ones; tests scale the
/// windows and counts down so that a limit is reached in a second.
public struct QuotaOptions: Sendable, Equatable, Codable {
    /// How Google answers over quota.
    public enum GoogleStyle: String, Sendable, Codable {
        /// HTTP 429, `status` RESOURCE_EXHAUSTED.
        case tooManyRequests
        /// HTTP 403, `errors[].reason` rateLimitExceeded.
        case forbidden
    }

    /// Voided purchases: calls per rolling window (published: 30 per 30 s).
    public var voidedPerWindow = 30
    /// Voided purchases: the rolling window in seconds (published: 30).
    public var voidedWindowSeconds = 30.0
    /// Voided purchases: calls per US-Pacific day (published: 6000).
    public var voidedPerDay = 6000
    /// The "Orders" bucket, shared by voided purchases and `orders.*`: calls per minute window (published: 3000).
    public var voidedPerMinute = 3000
    /// The Play Developer API's daily budget, shared by `orders.*` and subscriptionsv2 (published default: 200,000
    /// per day); Voided Purchases has its own 6000.
    public var developerApiPerDay = 200_000
    /// subscriptionsv2: calls per minute window (published: 3000).
    public var subscriptionsPerMinute = 3000
    /// Length of the "minute" windows in seconds (60; scale down in tests).
    public var minuteWindowSeconds = 60.0
    /// Apple Get Refund History: requests per second (published: 10).
    public var appleRefundHistoryPerSecond = 10.0
    /// Apple Get Notification History, Get All Subscription Statuses, Get Transaction History: requests per
    /// second (published: 50 each).
    public var appleOtherPerSecond = 50.0
    /// Share of the production limits the sandbox gets (published: 10 %).
    public var appleSandboxFactor = 0.1
    /// Length of Apple's "second" window in seconds (1; scale up to make limits easier to hit in tests).
    public var appleWindowSeconds = 1.0
    /// How Apple counts its per-second limits.
    public enum AppleEnforcement: String, Sendable, Codable {
        /// As Apple documents it: the limits are published per second and "enforced on an hourly basis", so the
        /// simulator refuses a call only past `rate × 3600` in a rolling hour (a burst inside one second is not
        /// refused, nor is a call a loaded host sent a little late).
        case hourly
        /// Strictly per `appleWindowSeconds`: for tests of the 429 answer and of per-second pacing.
        case perSecond
    }
    /// How Apple's limits are counted (`hourly`, as Apple documents).
    public var appleEnforcement = AppleEnforcement.hourly
    /// Google's over-quota answer.
    public var googleStyle = GoogleStyle.tooManyRequests
    /// Count quota windows on the wall clock instead of the simulator clock (as storerecon's own limiter does).
    public var useWallClock = false

    /// The published limits.
    public init() {}

    /// The rules for an endpoint.
    func rules(for endpoint: SimulatorEndpoint, sandbox: Bool) -> [QuotaRule] {
        let minute = Int64(minuteWindowSeconds * 1000)
        func apple(_ perSecond: Double) -> [QuotaRule] {
            let seconds = appleEnforcement == .hourly ? 3600 : appleWindowSeconds
            let limit = max(1, Int((perSecond * seconds * (sandbox ? appleSandboxFactor : 1)).rounded()))
            let name = appleEnforcement == .hourly ? "Requests per hour" : "Requests per second"
            return [QuotaRule(limit: limit, window: .rolling(millis: Int64(seconds * 1000)), name: name)]
        }
        switch endpoint {
        case .googleToken, .googleStorage, .googlePubSub:
            return []
        case .appleFinanceReports:
            return [QuotaRule(limit: 3500, window: .rolling(millis: 3_600_000), name: "Requests per hour")]
        case .googleVoidedPurchases:
            return [
                QuotaRule(
                    limit: voidedPerWindow, window: .rolling(millis: Int64(voidedWindowSeconds * 1000)),
                    name: "Queries per 30 seconds"),
                QuotaRule(
                    limit: voidedPerMinute, window: .rolling(millis: minute), name: "Orders queries per minute",
                    pool: "orders"),
                QuotaRule(limit: voidedPerDay, window: .pacificDay, name: "Queries per day"),
            ]
        case .googleOrders, .googleReviewRefund:
            return [
                QuotaRule(
                    limit: voidedPerMinute, window: .rolling(millis: minute), name: "Orders queries per minute",
                    pool: "orders"),
                QuotaRule(
                    limit: developerApiPerDay, window: .pacificDay, name: "Queries per day", pool: "developer-api"),
            ]
        case .googleSubscriptionsV2:
            return [
                QuotaRule(limit: subscriptionsPerMinute, window: .rolling(millis: minute), name: "Queries per minute"),
                QuotaRule(
                    limit: developerApiPerDay, window: .pacificDay, name: "Queries per day", pool: "developer-api"),
            ]
        case .appleRefundHistory:
            return apple(appleRefundHistoryPerSecond)
        case .appleNotificationHistory, .appleSubscriptionStatuses, .appleTransactionHistory, .appleConsumption:
            return apple(appleOtherPerSecond)
        }
    }
}
