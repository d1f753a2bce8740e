import Foundation
import RateLimiting
import StoreHTTP
import Testing

/// What a store's throttling answer may block (issue 27): a few of the API's windows at most, whatever its
/// `Retry-After` says.
@Suite("ThrottleBlock")
struct ThrottleBlockTests {
    let policy = QuotaPolicy()

    @Test func theCapIsAFewOfTheLongestWindowOrTheBackoffsMaximum() {
        // Google voided purchases: 30/30 s and 3000/60 s, each with a 250 ms margin: 3 × 60.25 s.
        #expect(policy.longestThrottleBlock(app: "a", api: .googleVoidedPurchases) == .milliseconds(180_750))
        // Apple refund history: 10 per 1.025 s; three of those are less than the backoff's 2 minutes.
        #expect(policy.longestThrottleBlock(app: "a", api: .appleRefundHistory) == .seconds(120))
        // An API without limits still gets the backoff's maximum.
        #expect(policy.longestThrottleBlock(app: "a", api: StoreAPI(rawValue: "other")) == .seconds(120))
    }

    @Test func aRetryAfterOfYearsIsCappedAndSaysSo() {
        let block = policy.throttleBlock(
            app: "a", api: .googleVoidedPurchases, retryAfter: 99_999_999, streak: 1, fraction: 0.5)
        #expect(block.duration == .milliseconds(180_750))
        #expect(
            block.reason == "throttled: Retry-After asked 3.2 years, capped at 180.75s (a few of the API's windows)")
    }

    @Test func applesMillisecondFormInTheYear2100IsCapped() throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
        let asked = try #require(RetryAfter.seconds(from: "4102444800000", now: now))
        #expect(asked == 4_102_444_800 - 1_795_000_000)
        let block = policy.throttleBlock(
            app: "a", api: .appleRefundHistory, retryAfter: asked, streak: 1, fraction: 0)
        #expect(block.duration == .seconds(120))
        #expect(block.reason.contains("73.1 years"))
    }

    @Test func aReasonableRetryAfterIsKeptAsAsked() {
        let block = policy.throttleBlock(
            app: "a", api: .googleVoidedPurchases, retryAfter: 30, streak: 4, fraction: 1)
        #expect(block.duration == .seconds(30))
        #expect(block.reason == "throttled: Retry-After 30s")
        // "Now", or a time already past by this host's clock: the backoff's floor (1 s), not no block at all.
        for asked in [-5.0, 0, 0.4] {
            let short = policy.throttleBlock(
                app: "a", api: .googleVoidedPurchases, retryAfter: asked, streak: 1, fraction: 1)
            #expect(short.duration == .seconds(1))
            #expect(short.reason.hasSuffix(", kept at least 1s"), "\(short.reason)")
        }
    }

    @Test func withoutRetryAfterTheBackoffGrowsWithTheStreak() {
        // Backoff 1 s base, 120 s maximum: the third throttle in a row waits up to 4 s (fraction 1: the ceiling).
        let third = policy.throttleBlock(app: "a", api: .googleVoidedPurchases, retryAfter: nil, streak: 3, fraction: 1)
        #expect(third.duration == .seconds(4))
        #expect(third.reason == "throttled without Retry-After: backoff 4s (throttle 3 in a row)")
        let tenth = policy.throttleBlock(app: "a", api: .appleRefundHistory, retryAfter: nil, streak: 10, fraction: 1)
        #expect(tenth.duration == .seconds(120))
    }

    @Test func theLocalGateObeysTheCapToo() async {
        let gate = LocalQuotaGate(policy: policy, clock: ContinuousClock())
        await gate.report(app: "a", api: .googleVoidedPurchases, feedback: .throttled(retryAfter: 99_999_999))
        let wait = await gate.wait(app: "a", api: .googleVoidedPurchases)
        #expect(wait > .seconds(170) && wait <= .milliseconds(180_750))
    }
}
