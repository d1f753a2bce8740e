import Foundation
import PlayDeveloperAPI
import Testing

@testable import Reconciler

/// Google's refund reviews, pure: the rules' products and countries on a Google request, the usage evidence sent and
/// not kept, and Google's decision read from the order once the review is over. Bodies and orders written by hand.
@Suite("Google refund reviews: rules, usage evidence, outcomes")
struct GoogleReviewAnswerTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func facts() -> ConsumptionFacts {
        ConsumptionFacts(
            customerConsented: true, deliveryStatus: .delivered, consumptionMilli: 40_000,
            sampleContentProvided: false, asOf: now)
    }

    func review(product: String?, country: String?) -> RefundRequestCase {
        RefundRequestCase(
            store: .google, productId: product, country: country, kind: .consumable, familyShared: false,
            deadline: now.addingTimeInterval(3600), facts: facts(),
            figures: LedgerFigures(tenureDays: nil, priorRefunds: 0, periodUsedMilli: nil), pendingToken: "prt-1")
    }

    func sent(_ verdict: RefundRequestVerdict) -> String? {
        verdict.body.map { String(decoding: $0.json, as: UTF8.self) }
    }

    @Test func aProductsRuleDecidesAGoogleRequest() {
        let rules = RefundRequestRules(rules: [
            RefundRequestRule(when: RuleCondition(products: ["coins.500"]), prefer: .grant),
            RefundRequestRule(when: RuleCondition(products: ["coins.100"]), prefer: .decline),
        ])
        let verdict = RefundRequestDecider(rules: rules).decide(review(product: "coins.100", country: "DE"), now: now)
        #expect(verdict.rule == "rules[1]")
        #expect(
            sent(verdict)
                == #"{"consumptionPercentageMilliunits":40000,"pendingRefundToken":"prt-1","refundPreference":"DECLINE","sampleContentProvided":false}"#
        )
        // A request whose order could not be read has no product: the rule does not match it.
        #expect(
            RefundRequestDecider(rules: rules).decide(review(product: nil, country: "DE"), now: now).rule == "default")
    }

    @Test func aCountriesRuleDecidesAGoogleRequest() throws {
        let yaml =
            #"{"rules": [{"when": {"countries": ["fr"]}, "prefer": "decline"}, "#
            + #"{"when": {"countries": ["de"]}, "prefer": "grant"}]}"#
        let rules = try JSONDecoder().decode(RefundRequestRules.self, from: Data(yaml.utf8))
        let verdict = RefundRequestDecider(rules: rules).decide(review(product: "coins.100", country: "DE"), now: now)
        #expect(verdict.rule == "rules[1]")
        #expect(
            sent(verdict)
                == #"{"consumptionPercentageMilliunits":40000,"pendingRefundToken":"prt-1","refundPreference":"APPROVE","sampleContentProvided":false}"#
        )
    }

    @Test func usageEventsAreSentButTheStoredBodyOnlyCountsThem() throws {
        var request = review(product: "coins.100", country: "DE")
        request.usageEvents = [
            ConsumptionUsageEvent(
                consumptionTime: Date(timeIntervalSince1970: 1_794_000_000), ipAddress: "203.0.113.7",
                location: .init(regionCode: "DE", administrativeArea: nil, locality: "Berlin", sublocality: nil),
                obfuscatedAccountId: "acct-1", obfuscatedProfileId: nil, consumptionItemDescription: "level 3")
        ]
        let body = try #require(RefundRequestDecider(rules: .init()).decide(request, now: now).body)
        #expect(
            String(decoding: body.json, as: UTF8.self)
                == #"{"consumptionPercentageMilliunits":40000,"consumptionUsageEvents":[{"consumptionItemDescription":"level 3","consumptionTime":"2026-11-06T21:20:00Z","ipAddress":"203.0.113.7","location":{"locality":"Berlin","regionCode":"DE"},"obfuscatedAccountId":"acct-1"}],"pendingRefundToken":"prt-1","refundPreference":"NEUTRAL","sampleContentProvided":false}"#
        )
        #expect(
            String(decoding: body.storedJSON, as: UTF8.self)
                == #"{"consumptionPercentageMilliunits":40000,"consumptionUsageEventsSent":1,"pendingRefundToken":"prt-1","refundPreference":"NEUTRAL","sampleContentProvided":false}"#
        )
        #expect(body.carriesUsageEvents)
    }

    static let order = #"""
        {"orderId":"GPA.1","purchaseToken":"tok","state":"REFUNDED","buyerAddress":{"buyerCountry":"de"},
         "createTime":"2026-11-01T10:00:00Z","total":{"currencyCode":"EUR","units":"4","nanos":990000000},
         "lineItems":[{"productId":"coins.100","oneTimePurchaseDetails":{"quantity":1}}],
         "orderHistory":{"refundEvent":{"eventTime":"2026-11-19T08:00:00Z","refundReason":"CHARGEBACK"}}}
        """#

    @Test func theOrderGivesProductCountryPriceAndGooglesDecision() throws {
        let order = GoogleReviewOrder(try JSONDecoder().decode(PlayOrder.self, from: Data(Self.order.utf8)))
        #expect(order.productId == "coins.100" && order.country == "DE" && order.productType == "one_time")
        #expect(order.priceNanos == 4_990_000_000 && order.currency == "EUR" && order.purchaseToken == "tok")
        let refundedAt = Date(timeIntervalSince1970: 1_795_075_200)  // 2026-11-19T08:00:00Z
        #expect(order.decision(reviewEnd: refundedAt) == .refunded)
        // Refunded after the review ended: not this review's outcome.
        #expect(order.decision(reviewEnd: refundedAt.addingTimeInterval(-1)) == .declined)
        var processed = order
        processed.state = "PROCESSED"
        #expect(processed.decision(reviewEnd: refundedAt) == .declined)
        var refunding = order
        (refunding.state, refunding.refundedAt) = ("PENDING_REFUND", nil)
        #expect(refunding.decision(reviewEnd: refundedAt) == .refunded)
        // Refunded in part only: by a partial refund made within the review, not before the request or after.
        var partial = order
        (partial.state, partial.refundedAt) = ("PARTIALLY_REFUNDED", nil)
        let since = refundedAt.addingTimeInterval(-48 * 3600)
        partial.partiallyRefundedAt = [refundedAt.addingTimeInterval(-3600)]
        #expect(partial.decision(reviewEnd: refundedAt, since: since) == .refunded)
        partial.partiallyRefundedAt = [since.addingTimeInterval(-3600), refundedAt.addingTimeInterval(3600)]
        #expect(partial.decision(reviewEnd: refundedAt, since: since) == .declined)
        // Refunding whole after an earlier goodwill part: the review's.
        refunding.partiallyRefundedAt = [since.addingTimeInterval(-3600)]
        #expect(refunding.decision(reviewEnd: refundedAt, since: since) == .refunded)
    }

    /// Google asked about the order again before refunding it: the refund is the later review's outcome (one refund
    /// answers one request), whether the order is refunded whole or in part.
    @Test func aRefundAfterGoogleAskedAgainIsTheLaterReviews() throws {
        let order = GoogleReviewOrder(try JSONDecoder().decode(PlayOrder.self, from: Data(Self.order.utf8)))
        let refundedAt = Date(timeIntervalSince1970: 1_795_075_200)
        let reviewEnd = refundedAt.addingTimeInterval(3600)
        #expect(order.decision(reviewEnd: reviewEnd, askedAgainAt: refundedAt.addingTimeInterval(-3600)) == .declined)
        #expect(order.decision(reviewEnd: reviewEnd, askedAgainAt: refundedAt) == .declined)
        #expect(order.decision(reviewEnd: reviewEnd, askedAgainAt: refundedAt.addingTimeInterval(1)) == .refunded)
        // The later review, asked after the refund: not its outcome either.
        let later = refundedAt.addingTimeInterval(1)
        #expect(order.decision(reviewEnd: later.addingTimeInterval(86_400), since: later) == .declined)
        var partial = order
        (partial.state, partial.refundedAt) = ("PARTIALLY_REFUNDED", nil)
        partial.partiallyRefundedAt = [refundedAt]
        let since = refundedAt.addingTimeInterval(-86_400)
        #expect(partial.decision(reviewEnd: reviewEnd, since: since, askedAgainAt: refundedAt) == .declined)
        #expect(partial.decision(reviewEnd: reviewEnd, since: since) == .refunded)
    }

    @Test func theReviewEndsADayAfterTheAnswerDeadline() {
        #expect(GoogleReviewPeriod.end(deadline: now) == now.addingTimeInterval(86_400))
    }
}
