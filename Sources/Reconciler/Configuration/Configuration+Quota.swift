import RateLimiting

extension Configuration {
    /// The quota policy of this configuration: the stores' published limits, Apple sandbox apps at 10 %, then each
    /// app's `limits:` overrides, and `sync.backfillShare` of every daily cap for backfills.
    public var quotaPolicy: QuotaPolicy {
        var appLimits: [String: QuotaLimits] = [:]
        for app in apps {
            var limits = QuotaLimits.published(appleSandbox: app.platform == .apple && app.environment != "production")
            let overrides = self.limits(for: app)
            if let value = overrides.voidedPerDay {
                limits = limits.overriding(.googleVoidedPurchases, dailyCap: value)
            }
            if let value = overrides.voidedPer30Seconds {
                limits = limits.overriding(.googleVoidedPurchases, count: value, per: .seconds(30))
            }
            if let value = overrides.subscriptionsPerMinute {
                limits = limits.overriding(.googleSubscriptions, count: value, per: .seconds(60))
            }
            if let value = overrides.ordersPerMinute {
                limits = limits.overriding(.googleOrders, count: value, per: .seconds(60))
            }
            if let value = overrides.developerApiPerDay {
                limits = limits.overriding(.googleOrders, dailyCap: value)
            }
            if let value = overrides.refundHistoryPerSecond {
                limits = limits.overriding(.appleRefundHistory, perSecond: value)
            }
            if let value = overrides.notificationHistoryPerSecond {
                limits = limits.overriding(.appleNotificationHistory, perSecond: value)
            }
            if let value = overrides.subscriptionStatusPerSecond {
                limits = limits.overriding(.appleSubscriptionStatuses, perSecond: value)
            }
            if let value = overrides.transactionHistoryPerSecond {
                limits = limits.overriding(.appleTransactionHistory, perSecond: value)
            }
            if let value = overrides.quotaMarginMs {
                limits = limits.withMargin(.milliseconds(value))
            }
            appLimits[app.id] = limits
        }
        return QuotaPolicy(defaultLimits: .published, appLimits: appLimits, backfillShare: sync.backfillShare)
    }
}
