/// The store endpoints the simulator serves; quotas, statistics and faults are kept per endpoint.
public enum SimulatorEndpoint: String, Sendable, CaseIterable, Codable, Comparable {
    /// Google OAuth token endpoint (`POST /token`).
    case googleToken
    /// Google `purchases.voidedpurchases.list`.
    case googleVoidedPurchases
    /// Google `purchases.subscriptionsv2.get`.
    case googleSubscriptionsV2
    /// Google `orders.get` and `orders.batchget`.
    case googleOrders
    /// Google `orders.reviewrefund`: counted apart from the order reads, in the same Orders quota bucket.
    case googleReviewRefund
    /// Apple Get Refund History v2.
    case appleRefundHistory
    /// Apple Get Notification History.
    case appleNotificationHistory
    /// Apple Get All Subscription Statuses.
    case appleSubscriptionStatuses
    /// Apple Get Transaction History v2.
    case appleTransactionHistory
    /// Cloud Pub/Sub `pull` and `acknowledge` (the RTDN subscriptions).
    case googlePubSub
    /// Apple Send Consumption Information v2.
    case appleConsumption
    /// Google Cloud Storage JSON API: the earnings reports' listing and downloads.
    case googleStorage
    /// App Store Connect API `financeReports`.
    case appleFinanceReports

    public static func < (lhs: SimulatorEndpoint, rhs: SimulatorEndpoint) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Whether the endpoint is Apple's.
    var isApple: Bool { rawValue.hasPrefix("apple") }
}
