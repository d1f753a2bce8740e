/// The limits of every store API for one app: the stores' published limits, with any per-app overrides.
///
/// Start from `published` (or `published(appleSandbox:)`) and override single APIs with the subscript.
/// An API without an entry is limited only by the stores' feedback (`QuotaGate.report`).
public struct QuotaLimits: Sendable, Hashable {
    /// The limit of each API.
    public var apis: [StoreAPI: QuotaLimit]

    /// Creates a table of limits.
    public init(_ apis: [StoreAPI: QuotaLimit] = [:]) {
        self.apis = apis
    }

    /// The limit of `api`, or `nil` when it has none. A sandbox fallback bucket (``StoreAPI/sandboxFallback``)
    /// without its own entry has ``appleSandboxFactor`` of its API's limit.
    public subscript(api: StoreAPI) -> QuotaLimit? {
        get { apis[api] ?? api.sandboxFallbackOf.flatMap { apis[$0]?.scaled(by: Self.appleSandboxFactor) } }
        set { apis[api] = newValue }
    }

    /// Apple's sandbox gets this share of the production limits.
    public static let appleSandboxFactor = 0.1

    /// Google's "Orders" bucket (3000 per minute) less what Voided Purchases may take of it (30 per 30 s: 60 a
    /// minute): the two APIs together never exceed the bucket.
    public static let ordersPerMinute = 3000 - 60
    /// The Play Developer API's default daily budget (orders.* count toward it; Voided Purchases has its own).
    public static let developerApiPerDay = 200_000

    /// The limits the stores publish, for a production app.
    ///
    /// - Google voided purchases: 30 in any 30 s, the "Orders" bucket's 3000 per minute, 6000 per Pacific day
    ///   ([voided purchases](https://developers.google.com/android-publisher/voided-purchases),
    ///   [quota buckets](https://developers.google.com/android-publisher/quotas)).
    /// - Google subscriptionsv2.get: 3000 per minute.
    /// - Google orders.get / orders.batchget: ``ordersPerMinute`` per minute, ``developerApiPerDay`` per day.
    /// - Google OAuth token endpoint: not published; 60 per minute so a bug cannot hammer it.
    /// - Apple ([rate limits](https://developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits)):
    ///   Get Refund History 10 per second; Get Notification History, Get All Subscription Statuses and Get
    ///   Transaction History 50 per second each. Apple enforces these over the hour; enforcing them per second is
    ///   stricter and never wrong.
    /// - Google Cloud Storage (earnings reports): no limit published for reads of one bucket's objects; 10 per second
    ///   keeps a fetch far from any.
    /// - App Store Connect API ([rate limits](https://developer.apple.com/documentation/appstoreconnectapi/identifying-rate-limits)):
    ///   about 3500 per key per rolling hour (`X-Rate-Limit: user-hour-lim`).
    public static let published = QuotaLimits([
        .googleVoidedPurchases: QuotaLimit(
            windows: [RateLimit(30, per: .seconds(30)), RateLimit(3000, per: .seconds(60))], dailyCap: 6000),
        .googleSubscriptions: QuotaLimit(windows: [RateLimit(3000, per: .seconds(60))]),
        .googleOrders: QuotaLimit(
            windows: [RateLimit(ordersPerMinute, per: .seconds(60))], dailyCap: developerApiPerDay),
        .googleOAuthToken: QuotaLimit(windows: [RateLimit(60, per: .seconds(60))]),
        .googlePubSub: QuotaLimit(windows: [.perSecond(50)]),
        .appleRefundHistory: QuotaLimit(windows: [.perSecond(10)]),
        .appleNotificationHistory: QuotaLimit(windows: [.perSecond(50)]),
        .appleSubscriptionStatuses: QuotaLimit(windows: [.perSecond(50)]),
        .appleTransactionHistory: QuotaLimit(windows: [.perSecond(50)]),
        .appleConsumption: QuotaLimit(windows: [.perSecond(50)]),
        .googleCloudStorage: QuotaLimit(windows: [.perSecond(10)]),
        .appleFinanceReports: QuotaLimit(windows: [RateLimit(3500, per: .seconds(3600))]),
    ])

    /// The published limits, with Apple's APIs at `appleSandboxFactor` when the app is in Apple's sandbox.
    public static func published(appleSandbox: Bool) -> QuotaLimits {
        appleSandbox ? published.scalingApple(by: appleSandboxFactor) : published
    }

    /// The APIs of Apple's App Store Server API.
    public static let appleAPIs: Set<StoreAPI> = [
        .appleRefundHistory, .appleNotificationHistory, .appleSubscriptionStatuses, .appleTransactionHistory,
        .appleConsumption,
    ]

    /// These limits with every Apple API scaled to `factor` (windows and any daily cap).
    public func scalingApple(by factor: Double) -> QuotaLimits {
        var scaled = self
        for (api, limit) in apis where Self.appleAPIs.contains(api) {
            scaled.apis[api] = limit.scaled(by: factor)
        }
        return scaled
    }

    /// These limits with `api`'s window of length `window` replaced by `count` per `window` (or added), keeping
    /// its other windows and its daily cap. For configuration overrides such as `voidedPer30Seconds`.
    public func overriding(_ api: StoreAPI, count: Int, per window: Duration) -> QuotaLimits {
        var limit = apis[api] ?? QuotaLimit(windows: [])
        let replacement = RateLimit(count, per: window)
        if let index = limit.windows.firstIndex(where: { $0.window == window }) {
            limit.windows[index] = replacement
        } else {
            limit.windows.append(replacement)
        }
        var result = self
        result.apis[api] = limit
        return result
    }

    /// These limits with `api`'s per-second rate replaced (Apple's form; fractional rates allowed).
    public func overriding(_ api: StoreAPI, perSecond rate: Double) -> QuotaLimits {
        var limit = apis[api] ?? QuotaLimit(windows: [])
        limit.windows = [.perSecond(rate)]
        var result = self
        result.apis[api] = limit
        return result
    }

    /// These limits with every window's latency allowance set to `margin` (at most 5 % of each window; see
    /// `RateLimit.withMargin(_:)`). For `limits.<app>.quotaMarginMs`.
    public func withMargin(_ margin: Duration) -> QuotaLimits {
        var result = self
        for (api, limit) in apis {
            result.apis[api] = QuotaLimit(
                windows: limit.windows.map { $0.withMargin(margin) }, dailyCap: limit.dailyCap)
        }
        return result
    }

    /// These limits with `api`'s daily cap replaced (`nil`: no cap).
    public func overriding(_ api: StoreAPI, dailyCap: Int?) -> QuotaLimits {
        var limit = apis[api] ?? QuotaLimit(windows: [])
        limit.dailyCap = dailyCap
        var result = self
        result.apis[api] = limit
        return result
    }
}
