import Foundation
import Reconciler
import Testing

/// The store constraints and the rules, each outcome with its body written out by hand.
@Suite("RefundRequestDecider")
struct RefundRequestDeciderTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    var deadline: Date { now.addingTimeInterval(3600) }

    func facts(
        consented: Bool = true, delivery: DeliveryStatus = .delivered, milli: Int? = 25_000, sample: Bool = false
    ) -> ConsumptionFacts {
        ConsumptionFacts(
            customerConsented: consented, deliveryStatus: delivery, consumptionMilli: milli,
            sampleContentProvided: sample, asOf: now)
    }

    func apple(
        _ kind: PurchaseKind = .consumable, facts: ConsumptionFacts?, familyShared: Bool = false,
        product: String = "coins.100", country: String = "US", figures: LedgerFigures? = nil
    ) -> RefundRequestCase {
        RefundRequestCase(
            store: .apple, productId: product, country: country, kind: kind, familyShared: familyShared,
            deadline: deadline, facts: facts,
            figures: figures ?? LedgerFigures(tenureDays: 10, priorRefunds: 0, periodUsedMilli: nil))
    }

    func text(_ verdict: RefundRequestVerdict) -> String? {
        verdict.body.map { String(decoding: $0.json, as: UTF8.self) }
    }

    // MARK: store constraints

    @Test func pastTheDeadlineIsMissedAndSendsNothing() {
        let verdict = RefundRequestDecider(rules: .init()).decide(apple(facts: facts()), now: deadline)
        #expect(verdict == RefundRequestVerdict(answer: .missed))
    }

    @Test func noFactsIsRecordedNoFacts() {
        let verdict = RefundRequestDecider(rules: .init()).decide(apple(facts: nil), now: now)
        #expect(verdict.answer == .noFacts)
        #expect(verdict.body == nil)
    }

    @Test func appleWithoutConsentIsNoConsent() {
        let verdict = RefundRequestDecider(rules: .init()).decide(apple(facts: facts(consented: false)), now: now)
        #expect(verdict.answer == .noConsent)
        #expect(verdict.body == nil)
    }

    @Test func familySharedAndUnsupportedTypesAreNotSupported() {
        let decider = RefundRequestDecider(rules: .init())
        #expect(decider.decide(apple(facts: facts(), familyShared: true), now: now).answer == .notSupported)
        #expect(decider.decide(apple(.nonRenewing, facts: facts()), now: now).answer == .notSupported)
        #expect(decider.decide(apple(.unknown("Bundle"), facts: facts()), now: now).answer == .notSupported)
    }

    @Test func autoRenewableNeverCarriesAPercentage() {
        let rules = RefundRequestRules(fallback: .grantProrated)
        let verdict = RefundRequestDecider(rules: rules).decide(apple(.autoRenewable, facts: facts()), now: now)
        #expect(verdict.answer == nil)
        #expect(verdict.preference == .grantProrated)
        #expect(
            text(verdict)
                == #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#
        )
    }

    @Test func undeliveredSendsZeroPercent() {
        let verdict = RefundRequestDecider(rules: .init(fallback: .grant)).decide(
            apple(facts: facts(delivery: .undeliveredServerOutage, milli: 40_000, sample: true)), now: now)
        #expect(
            text(verdict)
                == #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"UNDELIVERED_SERVER_OUTAGE","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#
        )
    }

    @Test func proratedWithNothingConsumedOnAOneTimePurchaseIsSentAsAFullGrant() {
        let verdict = RefundRequestDecider(rules: .init(fallback: .grantProrated)).decide(
            apple(.nonConsumable, facts: facts(milli: 0)), now: now)
        #expect(verdict.preference == .grant)
        #expect(
            text(verdict)
                == #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_FULL","sampleContentProvided":false}"#
        )
    }

    @Test func proratedWithSomethingConsumedStaysProrated() {
        let verdict = RefundRequestDecider(rules: .init(fallback: .grantProrated)).decide(
            apple(facts: facts(milli: 12_345)), now: now)
        #expect(verdict.preference == .grantProrated)
        #expect(
            text(verdict)
                == #"{"consumptionPercentage":12345,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#
        )
    }

    @Test func dataOnlySendsNoPreferenceAndUnknownConsumptionNoPercentage() {
        let verdict = RefundRequestDecider(rules: .init()).decide(apple(facts: facts(milli: nil)), now: now)
        #expect(verdict.rule == "default")
        #expect(verdict.preference == .dataOnly)
        #expect(
            text(verdict)
                == #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#)
    }

    @Test func noAnswerSendsNothing() {
        let verdict = RefundRequestDecider(rules: .init(fallback: .noAnswer)).decide(apple(facts: facts()), now: now)
        #expect(verdict == RefundRequestVerdict(answer: nil, rule: "default", preference: .noAnswer))
    }

    @Test func googleAnswersWithoutConsentAndMapsPreferences() {
        let request = RefundRequestCase(
            store: .google, productId: "gems", country: "DE", kind: .consumable, familyShared: false,
            deadline: deadline, facts: facts(consented: false, milli: 50_000),
            figures: LedgerFigures(tenureDays: nil, priorRefunds: 0, periodUsedMilli: nil), pendingToken: "tok-1")
        let prorated = RefundRequestDecider(rules: .init(fallback: .grantProrated)).decide(request, now: now)
        #expect(prorated.preference == .grant)
        #expect(
            text(prorated)
                == #"{"consumptionPercentageMilliunits":50000,"pendingRefundToken":"tok-1","refundPreference":"APPROVE","sampleContentProvided":false}"#
        )
        let neutral = RefundRequestDecider(rules: .init()).decide(request, now: now)
        #expect(
            text(neutral)
                == #"{"consumptionPercentageMilliunits":50000,"pendingRefundToken":"tok-1","refundPreference":"NEUTRAL","sampleContentProvided":false}"#
        )
        var tokenless = request
        tokenless.pendingToken = nil
        #expect(RefundRequestDecider(rules: .init()).decide(tokenless, now: now).answer == .notSupported)
    }

    // MARK: rules

    let rules = RefundRequestRules(
        rules: [
            RefundRequestRule(when: RuleCondition(delivered: false), prefer: .grant),
            RefundRequestRule(when: RuleCondition(priorRefundsAtLeast: 2), prefer: .decline),
            RefundRequestRule(
                when: RuleCondition(products: ["coins.100"], countries: ["DE"], consumedPercentAtLeast: 50),
                prefer: .decline),
            RefundRequestRule(when: RuleCondition(consumedPercentBelow: 10, tenureDaysAtLeast: 30), prefer: .grant),
        ], fallback: .dataOnly)

    @Test(arguments: [
        // (delivery, milli, country, tenure, prior refunds) -> rule, preference
        (DeliveryStatus.undeliveredOther, 90_000, "DE", 400, 5, "rules[0]", RefundPreference.grant),
        (.delivered, 90_000, "DE", 400, 2, "rules[1]", .decline),
        (.delivered, 50_000, "DE", 1, 0, "rules[2]", .decline),
        (.delivered, 49_999, "DE", 1, 0, "default", .dataOnly),
        (.delivered, 90_000, "US", 1, 0, "default", .dataOnly),
        (.delivered, 9_999, "US", 30, 0, "rules[3]", .grant),
        (.delivered, 9_999, "US", 29, 0, "default", .dataOnly),
        (.delivered, 10_000, "US", 30, 0, "default", .dataOnly),
    ])
    func firstMatchingRuleWins(
        delivery: DeliveryStatus, milli: Int, country: String, tenure: Int, prior: Int, rule: String,
        preference: RefundPreference
    ) {
        let request = apple(
            facts: facts(delivery: delivery, milli: milli), country: country,
            figures: LedgerFigures(tenureDays: tenure, priorRefunds: prior, periodUsedMilli: nil))
        let verdict = RefundRequestDecider(rules: rules).decide(request, now: now)
        #expect(verdict.rule == rule)
        #expect(verdict.preference == preference)
    }

    @Test func unknownFiguresDoNotMatch() {
        let request = apple(
            facts: facts(milli: nil), figures: LedgerFigures(tenureDays: nil, priorRefunds: 0, periodUsedMilli: nil))
        let onlyKnown = RefundRequestRules(rules: [
            RefundRequestRule(when: RuleCondition(consumedPercentBelow: 100), prefer: .grant),
            RefundRequestRule(when: RuleCondition(tenureDaysAtLeast: 0), prefer: .decline),
        ])
        #expect(RefundRequestDecider(rules: onlyKnown).decide(request, now: now).rule == "default")
    }
}
