import RateLimiting
import Testing

@Suite("RateLimit and QuotaLimit")
struct RateLimitTests {
    @Test(arguments: [
        (Duration.seconds(1), Duration.milliseconds(50)), (.seconds(2), .milliseconds(100)),
        (.seconds(4), .milliseconds(200)), (.seconds(30), .milliseconds(250)), (.seconds(60), .milliseconds(250)),
    ])
    func theDefaultMarginIsFivePercentAtMost250Milliseconds(window: Duration, margin: Duration) {
        #expect(RateLimit(1, per: window).margin == margin)
        #expect(RateLimit(1, per: window).enforcedWindow == window + margin)
    }

    @Test(arguments: [
        (10.0, 10, Duration.seconds(1)), (50.0, 50, .seconds(1)), (2.5, 2, .milliseconds(800)),
        (0.5, 1, .seconds(2)), (1.0, 1, .seconds(1)),
    ])
    func perSecondRatesBecomeWindows(rate: Double, count: Int, window: Duration) {
        let limit = RateLimit.perSecond(rate)
        #expect(limit.count == count)
        #expect(limit.window == window)
        // Apple enforces its per-second rates over the hour: half the general margin, 2.5 % of the window.
        #expect(limit.margin == window / 40)
    }

    @Test(arguments: [
        (RateLimit(10, per: .seconds(1)), 1, Duration.seconds(1)), (RateLimit(50, per: .seconds(1)), 5, .seconds(1)),
        (RateLimit(30, per: .seconds(30)), 3, .seconds(30)), (RateLimit(1, per: .seconds(1)), 1, .seconds(10)),
        (RateLimit(5, per: .seconds(1)), 1, .seconds(2)),
    ])
    func aTenthOfALimitNeverExceedsATenthOfItsRate(limit: RateLimit, count: Int, window: Duration) {
        let scaled = limit.scaled(by: 0.1)
        #expect(scaled.count == count)
        #expect(scaled.window == window)
        #expect(
            Double(scaled.count) / scaled.window.secondsValue <= Double(limit.count) / limit.window.secondsValue * 0.1
                + 1e-12)
    }

    @Test func aLongWindowIsSplitSoTheLogStaysShort() {
        let split = RateLimit(3000, per: .seconds(60)).split(maximumCount: 200)
        #expect(split.count == 200)
        #expect(split.window == .seconds(4))
        // 15 parts cover the original enforced window, so the original bound still holds.
        #expect(split.enforcedWindow * 15 >= RateLimit(3000, per: .seconds(60)).enforcedWindow)
        #expect(RateLimit(30, per: .seconds(30)).split(maximumCount: 200) == RateLimit(30, per: .seconds(30)))
    }

    @Test func windowsImpliedByOthersAreNotEnforced() {
        let voided = QuotaLimit(windows: [RateLimit(30, per: .seconds(30)), RateLimit(3000, per: .seconds(60))])
        #expect(voided.enforcedWindows == [RateLimit(30, per: .seconds(30))])
        #expect(voided.logLength == 30)
        let both = QuotaLimit(windows: [RateLimit(30, per: .seconds(30)), RateLimit(40, per: .seconds(60))])
        #expect(both.enforcedWindows.count == 2)
        let duplicate = QuotaLimit(windows: [RateLimit(10, per: .seconds(1)), RateLimit(10, per: .seconds(1))])
        #expect(duplicate.enforcedWindows == [RateLimit(10, per: .seconds(1))])
        let looser = QuotaLimit(windows: [RateLimit(15, per: .seconds(1)), RateLimit(10, per: .seconds(1))])
        #expect(looser.enforcedWindows == [RateLimit(10, per: .seconds(1))])
        let subscriptions = QuotaLimit(windows: [RateLimit(3000, per: .seconds(60))])
        #expect(subscriptions.enforcedWindows.map(\.count) == [200])
    }

    @Test func theBackfillShareRoundsDown() {
        let limit = QuotaLimit(windows: [], dailyCap: 6000)
        #expect(limit.backfillCap(share: 0.5) == 3000)
        #expect(limit.backfillCap(share: 0.333) == 1998)
        #expect(limit.backfillCap(share: 2) == 6000)
        #expect(QuotaLimit(windows: []).backfillCap(share: 0.5) == nil)
    }

    @Test func thePublishedLimits() throws {
        let published = QuotaLimits.published
        let voided = try #require(published[.googleVoidedPurchases])
        #expect(voided.dailyCap == 6000)
        #expect(voided.windows == [RateLimit(30, per: .seconds(30)), RateLimit(3000, per: .seconds(60))])
        #expect(published[.googleSubscriptions]?.windows == [RateLimit(3000, per: .seconds(60))])
        // Apple's rates keep a 25 ms margin on their second (they are enforced over the hour).
        let second = Duration.seconds(1)
        #expect(published[.appleRefundHistory]?.windows == [RateLimit(10, per: second, margin: .milliseconds(25))])
        for api in [StoreAPI.appleNotificationHistory, .appleSubscriptionStatuses, .appleTransactionHistory] {
            #expect(published[api]?.windows == [RateLimit(50, per: second, margin: .milliseconds(25))], "\(api)")
        }
    }

    @Test func appleSandboxGetsATenthAndGoogleIsUnchanged() {
        let sandbox = QuotaLimits.published(appleSandbox: true)
        #expect(sandbox[.appleRefundHistory]?.windows.map(\.count) == [1])
        #expect(sandbox[.appleSubscriptionStatuses]?.windows.map(\.count) == [5])
        #expect(sandbox[.googleVoidedPurchases] == QuotaLimits.published[.googleVoidedPurchases])
        #expect(QuotaLimits.published(appleSandbox: false) == QuotaLimits.published)
        // A production app's calls that fall back to sandbox: their own bucket, a tenth of the API's limit.
        let production = QuotaLimits.published.overriding(.appleSubscriptionStatuses, perSecond: 20)
        #expect(production[.appleRefundHistory.sandboxFallback]?.windows.map(\.count) == [1])
        #expect(production[.appleSubscriptionStatuses.sandboxFallback]?.windows.map(\.count) == [2])
        #expect(
            production[StoreAPI.appleRefundHistory.sandboxFallback.sandboxFallbackOf!]
                == production[.appleRefundHistory])
        #expect(!StoreAPI.appleRefundHistory.sandboxFallback.countsShortWindows)
        #expect(StoreAPI.googleOrders.sandboxFallbackOf == nil)
    }

    @Test func overridesReplaceOnlyWhatTheyName() {
        let limits = QuotaLimits.published
            .overriding(.googleVoidedPurchases, count: 20, per: .seconds(30))
            .overriding(.googleVoidedPurchases, dailyCap: 1000)
            .overriding(.appleRefundHistory, perSecond: 2.5)
        #expect(
            limits[.googleVoidedPurchases]
                == QuotaLimit(
                    windows: [RateLimit(20, per: .seconds(30)), RateLimit(3000, per: .seconds(60))], dailyCap: 1000))
        #expect(
            limits[.appleRefundHistory]?.windows == [RateLimit(2, per: .milliseconds(800), margin: .milliseconds(20))])
        #expect(limits[.googleSubscriptions] == QuotaLimits.published[.googleSubscriptions])
    }

    @Test func descriptions() {
        #expect(RateLimit(30, per: .seconds(30)).description == "30/30s")
        #expect(RateLimit(2, per: .milliseconds(800)).description == "2/800ms")
        #expect(QuotaLimits.published[.googleVoidedPurchases]?.description == "30/30s + 3000/60s, 6000/day")
    }
}
