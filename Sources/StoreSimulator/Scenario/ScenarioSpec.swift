/// What a generated scenario is made from: a seed, sizes, apps and products. `storesim init` writes it as
/// `scenario.json`; the same spec always generates the same scenario.
///
/// JSON keys are the property names; every key but `seed` may be left out. Example:
/// `{"seed":42,"anchorMillis":1795000000000,"subscriptions":1000,"oneTimePurchases":200,"refunds":150}`.
public struct ScenarioSpec: Codable, Sendable, Equatable {
    /// The seed of every random choice.
    public var seed: UInt64
    /// The scenario's reference time (ms): histories end around it, and the fixed clock starts there.
    public var anchorMillis: Int64
    /// Subscriptions in all, shared evenly among the apps.
    public var subscriptions: Int
    /// One-time purchases in all (consumables with quantities, non-consumables).
    public var oneTimePurchases: Int
    /// Refunds and voids to generate (each on a different purchase; Google partial refunds add parts).
    public var refunds: Int
    /// How far before the anchor subscriptions may start, in days.
    public var historyDays: Int
    /// How far after the anchor events are generated (they appear as the clock advances), in days.
    public var futureDays: Int
    /// How far before the anchor one-time purchases may be made, in days; `nil` (the default) is `historyDays`, as
    /// before this option existed. A short span puts their refunds and voids (made within 30 days of the purchase)
    /// inside Google's 30-day voided window while subscriptions keep a long history, as a load scenario needs.
    public var oneTimeDays: Int?
    /// Share of Apple purchases made in the sandbox environment.
    public var sandboxShare: Double
    /// Share of Google voids recorded late (days after the void).
    public var lateVoidShare: Double
    /// Most refunds on one purchase: past the first, a purchase picked for a refund may also have up to this many
    /// minus one refunds of older renewals (which do not revoke it), so that refund history needs several pages.
    public var maxRefundsPerPurchase: Int
    /// Share of voided Google subscription orders that come with a void of the renewal before (same purchase token,
    /// another order id), as when a customer charges back two months at once. 0 (the default) leaves scenarios as
    /// they were generated before this option existed.
    public var renewalVoidShare: Double
    /// Apple purchases one customer makes in an app (default 1): that many consecutive purchases of an app (in one
    /// environment) belong to one customer, whose Get Refund History, asked with any of their transactions, returns
    /// the refunds of all of them, whose signed transactions share one `appTransactionId`, and whom the subscription
    /// export names by one `user_ref`. Nothing else about the scenario changes with it.
    public var appleCustomerPlans: Int
    /// Apple `CONSUMPTION_REQUEST` notifications (refund requests) in all, shared evenly among the Apple apps, on
    /// their production purchases, in the 12 hours before the anchor; every tenth of an app's is 13 hours old (past
    /// Apple's answer window). Default 0.
    public var consumptionRequests: Int
    /// Google pending refund reviews (chargebacks) in all, on purchases of the Google apps, published to each app's
    /// RTDN subscription in the 24 hours before the anchor (every tenth 25 hours before it). Default 0.
    public var refundReviews: Int
    /// Other RTDN messages per Google app: its newest `rtdnNotices` voids, each a `voidedPurchaseNotification`
    /// published when the void was recorded, and `rtdnNotices` of its subscriptions picked by the seed, each a
    /// `subscriptionNotification` published an hour before the anchor. Default 0.
    public var rtdnNotices: Int
    /// The apps.
    public var apps: [SimulatedApp]
    /// The products.
    public var products: [SimulatedProduct]

    /// Creates a spec; defaults are one Apple and one Google app, the default catalogue, and a history of 400
    /// days before the anchor and 30 after.
    public init(
        seed: UInt64 = 1, anchorMillis: Int64 = 1_795_000_000_000, subscriptions: Int = 1000,
        oneTimePurchases: Int? = nil, refunds: Int? = nil, historyDays: Int = 400, futureDays: Int = 30,
        oneTimeDays: Int? = nil, sandboxShare: Double = 0.05, lateVoidShare: Double = 0.1,
        maxRefundsPerPurchase: Int = 1, renewalVoidShare: Double = 0, apps: [SimulatedApp] = SimulatedApp.defaults,
        products: [SimulatedProduct] = SimulatedProduct.defaults
    ) {
        self.seed = seed
        self.anchorMillis = anchorMillis
        self.subscriptions = subscriptions
        self.oneTimePurchases = oneTimePurchases ?? subscriptions / 5
        self.refunds = refunds ?? max(1, subscriptions / 10)
        self.historyDays = historyDays
        self.futureDays = futureDays
        self.oneTimeDays = oneTimeDays
        self.sandboxShare = sandboxShare
        self.lateVoidShare = lateVoidShare
        self.maxRefundsPerPurchase = maxRefundsPerPurchase
        self.renewalVoidShare = renewalVoidShare
        appleCustomerPlans = 1
        consumptionRequests = 0
        refundReviews = 0
        rtdnNotices = 0
        self.apps = apps
        self.products = products
    }

    enum CodingKeys: String, CodingKey {
        case seed, anchorMillis, subscriptions, oneTimePurchases, refunds, historyDays, futureDays, oneTimeDays
        case sandboxShare, lateVoidShare, maxRefundsPerPurchase, renewalVoidShare, apps, products
        case appleCustomerPlans, consumptionRequests, refundReviews, rtdnNotices
    }

    /// Decodes a spec; missing keys take the defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let subscriptions = try container.decodeIfPresent(Int.self, forKey: .subscriptions) ?? 1000
        self.init(
            seed: try container.decode(UInt64.self, forKey: .seed),
            anchorMillis: try container.decodeIfPresent(Int64.self, forKey: .anchorMillis) ?? 1_795_000_000_000,
            subscriptions: subscriptions,
            oneTimePurchases: try container.decodeIfPresent(Int.self, forKey: .oneTimePurchases),
            refunds: try container.decodeIfPresent(Int.self, forKey: .refunds),
            historyDays: try container.decodeIfPresent(Int.self, forKey: .historyDays) ?? 400,
            futureDays: try container.decodeIfPresent(Int.self, forKey: .futureDays) ?? 30,
            oneTimeDays: try container.decodeIfPresent(Int.self, forKey: .oneTimeDays),
            sandboxShare: try container.decodeIfPresent(Double.self, forKey: .sandboxShare) ?? 0.05,
            lateVoidShare: try container.decodeIfPresent(Double.self, forKey: .lateVoidShare) ?? 0.1,
            maxRefundsPerPurchase: try container.decodeIfPresent(Int.self, forKey: .maxRefundsPerPurchase) ?? 1,
            renewalVoidShare: try container.decodeIfPresent(Double.self, forKey: .renewalVoidShare) ?? 0,
            apps: try container.decodeIfPresent([SimulatedApp].self, forKey: .apps) ?? SimulatedApp.defaults,
            products: try container.decodeIfPresent([SimulatedProduct].self, forKey: .products)
                ?? SimulatedProduct.defaults
        )
        appleCustomerPlans = max(1, try container.decodeIfPresent(Int.self, forKey: .appleCustomerPlans) ?? 1)
        consumptionRequests = max(0, try container.decodeIfPresent(Int.self, forKey: .consumptionRequests) ?? 0)
        refundReviews = max(0, try container.decodeIfPresent(Int.self, forKey: .refundReviews) ?? 0)
        rtdnNotices = max(0, try container.decodeIfPresent(Int.self, forKey: .rtdnNotices) ?? 0)
    }
}
