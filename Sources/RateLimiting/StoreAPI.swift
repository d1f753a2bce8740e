/// A rationed store API: the unit a quota is counted in, per app.
public struct StoreAPI: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// A stable name, stored in `quota_bucket.api` and `job_run.calls`.
    public var rawValue: String

    /// Creates an API name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Google `purchases.voidedpurchases.list`: 30 per 30 s, 6000 per Pacific day, per package.
    public static let googleVoidedPurchases = StoreAPI(rawValue: "google.voidedpurchases")
    /// Google `purchases.subscriptionsv2.get`: 3000 per minute.
    public static let googleSubscriptions = StoreAPI(rawValue: "google.subscriptionsv2")
    /// Google `orders.get` / `orders.batchget`: the "Orders" bucket's 3000 per minute, shared with Voided
    /// Purchases (which takes at most 60 of it a minute, so orders get 2940), and the Play Developer API's daily
    /// budget (200,000 by default).
    public static let googleOrders = StoreAPI(rawValue: "google.orders")
    /// Cloud Pub/Sub `pull` and `acknowledge` on storerecon's own RTDN subscription: 50 per second (far below
    /// Pub/Sub's own quotas).
    public static let googlePubSub = StoreAPI(rawValue: "google.pubsub")
    /// Google's OAuth token endpoint (rarely called; limited so a bug cannot hammer it).
    public static let googleOAuthToken = StoreAPI(rawValue: "google.oauth")
    /// Apple Get Refund History v2: 10 per second.
    public static let appleRefundHistory = StoreAPI(rawValue: "apple.refundhistory")
    /// Apple Get Notification History: 50 per second.
    public static let appleNotificationHistory = StoreAPI(rawValue: "apple.notificationhistory")
    /// Apple Get All Subscription Statuses: 50 per second.
    public static let appleSubscriptionStatuses = StoreAPI(rawValue: "apple.subscriptionstatuses")
    /// Apple Get Transaction History v2: 50 per second.
    public static let appleTransactionHistory = StoreAPI(rawValue: "apple.transactionhistory")
    /// Apple Send Consumption Information v2 (answers to refund requests): 50 per second.
    public static let appleConsumption = StoreAPI(rawValue: "apple.consumption")

    /// Google Cloud Storage JSON API (earnings reports: object listing and download): 10 per second.
    public static let googleCloudStorage = StoreAPI(rawValue: "google.storage")
    /// App Store Connect API `financeReports`: 3500 per key per rolling hour.
    public static let appleFinanceReports = StoreAPI(rawValue: "apple.financereports")

    /// The bucket of a production app's calls of this Apple API that go to Apple's sandbox (a transaction
    /// production does not know): Apple limits sandbox on its own, at 10 % of production (`shared/stores.md`), so
    /// those calls neither spend production's bucket nor slow it when sandbox throttles them.
    public var sandboxFallback: StoreAPI { StoreAPI(rawValue: rawValue + Self.sandboxSuffix) }

    /// The API whose sandbox fallback bucket this is, or nil.
    public var sandboxFallbackOf: StoreAPI? {
        rawValue.hasSuffix(Self.sandboxSuffix)
            ? StoreAPI(rawValue: String(rawValue.dropLast(Self.sandboxSuffix.count))) : nil
    }

    private static let sandboxSuffix = ".sandbox"

    /// Whether the store counts this API's calls in windows short enough that a call arriving a few hundred
    /// milliseconds late can meet a full one (Google's 30 per 30 s). Apple's App Store Server API publishes its
    /// limits per second but enforces them "on an hourly basis" (`shared/stores.md`): there, pacing per second is
    /// courtesy, and a late arrival costs nothing.
    public var countsShortWindows: Bool {
        ![
            .appleRefundHistory, .appleNotificationHistory, .appleSubscriptionStatuses, .appleTransactionHistory,
            .appleConsumption,
        ].contains(sandboxFallbackOf ?? self)
    }

    public var description: String { rawValue }
}

/// Why a call is made: backfills may take only their configured share of a daily budget, so the nightly
/// incremental sync always finds what it needs.
public enum CallPurpose: String, Sendable, Codable {
    /// Nightly or hourly incremental work.
    case incremental
    /// A manual backfill.
    case backfill
}

/// What the store said about a call, fed back to the limiter.
public enum QuotaFeedback: Sendable, Equatable {
    /// The call went through.
    case accepted
    /// The store throttled the call (429, or Google 403 `rateLimitExceeded`). `retryAfter` is the store's
    /// `Retry-After`, when it sent one, as seconds from now.
    case throttled(retryAfter: Double?)
    /// The store said the daily quota is spent ("per day"): no more calls until the Pacific day turns. `sentOn` is
    /// the Pacific day the call left in (nil: today's): a call sent just before midnight and refused just after
    /// spent the day it was counted in, not the new one.
    case dailyQuotaExhausted(sentOn: PacificDay?)
}

/// The gate every store call passes. Implementations share one budget across processes (Postgres) or, in pure
/// unit tests, within one process.
public protocol QuotaGate: Sendable {
    /// Waits until one call of `api` for `app` is allowed, then counts it.
    /// - Returns: the latest moment the call may leave, for a limit the store counts by arrival in short windows: a
    ///   call that leaves later may reach the store in the count of a later window than the one it was granted in
    ///   (a loaded host). `nil` when it does not matter.
    /// - Throws: `QuotaError` when the daily budget for this purpose is spent (the job should stop with exit 75),
    ///   or `CancellationError` when the task is cancelled while waiting.
    @discardableResult
    func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant?

    /// Tells the limiter what the store answered, so a 429 drains the bucket and a "per day" answer stops the API.
    func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async

    /// Waits until this process's earlier calls of `api` for `app` allow one more to be asked for, judged by when
    /// their answers came back (``ArrivalPacer``), then counts it in flight until ``endCall(app:api:)``.
    /// ``QuotaGate/sendGranted(app:api:purpose:onLate:_:)`` brackets every store call with the two.
    /// - Throws: `CancellationError` when cancelled while waiting.
    func beginCall(app: String, api: StoreAPI) async throws

    /// Counts a call begun with ``beginCall(app:api:)`` as answered (or failed) `answeredAgo` before now: the
    /// transport's own time of the answer's first byte, which the calling task may reach much later on a loaded host.
    func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async
}

extension QuotaGate {
    /// No pacing by answers: a gate that only grants.
    public func beginCall(app: String, api: StoreAPI) async throws {}

    /// No pacing by answers: a gate that only grants.
    public func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async {}

    /// Counts a call begun with ``beginCall(app:api:)`` as answered (or failed) now.
    public func endCall(app: String, api: StoreAPI) async {
        await endCall(app: app, api: api, answeredAgo: .zero)
    }
}

/// The daily budget (or the share a backfill may take of it) is spent, or the store said so.
public struct QuotaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The app.
    public var app: String
    /// The API.
    public var api: StoreAPI
    /// Why no more calls are allowed today.
    public var reason: String

    /// Creates the error.
    public init(app: String, api: StoreAPI, reason: String) {
        self.app = app
        self.api = api
        self.reason = reason
    }

    public var description: String { "quota for \(api) of app \(app) is spent for today: \(reason)" }
}
