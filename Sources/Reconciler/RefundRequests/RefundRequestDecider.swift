import Foundation

/// One request as the decider sees it: the store, the purchase, the deadline, and what is known.
public struct RefundRequestCase: Sendable, Equatable {
    /// Which store asked.
    public var store: RequestingStore
    /// The product id.
    public var productId: String?
    /// The country (alpha-2).
    public var country: String?
    /// The purchase's kind.
    public var kind: PurchaseKind
    /// Whether the transaction is family-shared (Apple cannot take an answer for it).
    public var familyShared: Bool
    /// When the store stops waiting.
    public var deadline: Date
    /// The backend's facts, if any.
    public var facts: ConsumptionFacts?
    /// What the ledger knows.
    public var figures: LedgerFigures
    /// Google's `pendingRefundToken`.
    public var pendingToken: String?
    /// Google: the backend's usage evidence to send with the answer (most recent first, at most 1000).
    public var usageEvents: [ConsumptionUsageEvent] = []

    /// Creates a case.
    public init(
        store: RequestingStore, productId: String?, country: String?, kind: PurchaseKind, familyShared: Bool,
        deadline: Date, facts: ConsumptionFacts?, figures: LedgerFigures, pendingToken: String? = nil
    ) {
        self.store = store
        self.productId = productId
        self.country = country
        self.kind = kind
        self.familyShared = familyShared
        self.deadline = deadline
        self.facts = facts
        self.figures = figures
        self.pendingToken = pendingToken
    }
}

/// What to do with a request.
public struct RefundRequestVerdict: Sendable, Equatable {
    /// The answer to record now, or `nil` when a body is to be sent (or, for `no_answer`, nothing until the
    /// deadline).
    public var answer: RefundRequestAnswer?
    /// The rule that decided (`rules[i]` or `default`), when rules were consulted.
    public var rule: String?
    /// The preference as sent (after the store's constraints).
    public var preference: RefundPreference?
    /// The body to send.
    public var body: RefundAnswerBody?

    /// Creates a verdict.
    public init(
        answer: RefundRequestAnswer?, rule: String? = nil, preference: RefundPreference? = nil,
        body: RefundAnswerBody? = nil
    ) {
        self.answer = answer
        self.rule = rule
        self.preference = preference
        self.body = body
    }
}

/// Decides a request: the store's constraints first, then the app's rules, then a body the store documents as
/// valid. Pure.
public struct RefundRequestDecider: Sendable {
    /// The app's rules.
    public var rules: RefundRequestRules

    /// Creates a decider.
    public init(rules: RefundRequestRules) { self.rules = rules }

    /// The verdict on `request` at `now`.
    public func decide(_ request: RefundRequestCase, now: Date) -> RefundRequestVerdict {
        if now >= request.deadline { return RefundRequestVerdict(answer: .missed) }
        if request.store == .apple {
            switch request.kind {
            case .nonRenewing, .unknown: return RefundRequestVerdict(answer: .notSupported)
            case .autoRenewable, .consumable, .nonConsumable: break
            }
            if request.familyShared { return RefundRequestVerdict(answer: .notSupported) }
        } else if request.pendingToken?.isEmpty ?? true {
            return RefundRequestVerdict(answer: .notSupported)
        }
        guard let facts = request.facts else { return RefundRequestVerdict(answer: .noFacts) }
        if request.store == .apple, !facts.customerConsented { return RefundRequestVerdict(answer: .noConsent) }
        let subject = RuleSubject(
            productId: request.productId, country: request.country, facts: facts, figures: request.figures)
        let (rule, wanted) = rules.preference(for: subject)
        if wanted == .noAnswer { return RefundRequestVerdict(answer: nil, rule: rule, preference: .noAnswer) }
        switch request.store {
        case .apple:
            let (preference, body) = Self.appleBody(facts, kind: request.kind, preference: wanted)
            return RefundRequestVerdict(answer: nil, rule: rule, preference: preference, body: .apple(body))
        case .google:
            let (preference, made) = Self.googleBody(facts, token: request.pendingToken ?? "", preference: wanted)
            var body = made
            body.consumptionUsageEvents = Array(request.usageEvents.prefix(ConsumptionUsageEventStore.maxEvents))
            return RefundRequestVerdict(answer: nil, rule: rule, preference: preference, body: .google(body))
        }
    }

    /// Apple's body: no percentage for an auto-renewable, 0 when not delivered, and `GRANT_PRORATED` on a one-time
    /// or non-renewing purchase with nothing consumed sent as `GRANT_FULL` (Apple wants a percentage above 0 there).
    static func appleBody(
        _ facts: ConsumptionFacts, kind: PurchaseKind, preference: RefundPreference
    ) -> (RefundPreference, AppleConsumptionBody) {
        var percentage: Int?
        if kind != .autoRenewable {
            percentage = facts.deliveryStatus == .delivered ? facts.consumptionMilli : 0
        }
        var sent = preference
        if preference == .grantProrated, kind != .autoRenewable, (percentage ?? 0) == 0 { sent = .grant }
        let wire: String? =
            switch sent {
            case .decline: "DECLINE"
            case .grant: "GRANT_FULL"
            case .grantProrated: "GRANT_PRORATED"
            case .dataOnly, .noAnswer: nil
            }
        let body = AppleConsumptionBody(
            customerConsented: true, deliveryStatus: facts.deliveryStatus.appleValue,
            sampleContentProvided: facts.sampleContentProvided, consumptionPercentage: percentage,
            refundPreference: wire)
        return (sent, body)
    }

    /// Google's body: `grant_prorated` is `APPROVE` (recorded as `grant`), `data_only` is `NEUTRAL`; the percentage
    /// is 0 when not delivered.
    static func googleBody(
        _ facts: ConsumptionFacts, token: String, preference: RefundPreference
    ) -> (RefundPreference, GoogleReviewRefundBody) {
        let sent: RefundPreference = preference == .grantProrated ? .grant : preference
        let wire =
            switch sent {
            case .decline: "DECLINE"
            case .grant, .grantProrated: "APPROVE"
            case .dataOnly, .noAnswer: "NEUTRAL"
            }
        let percentage = facts.deliveryStatus == .delivered ? facts.consumptionMilli : 0
        let body = GoogleReviewRefundBody(
            pendingRefundToken: token, sampleContentProvided: facts.sampleContentProvided, refundPreference: wire,
            consumptionPercentageMilliunits: percentage)
        return (sent, body)
    }
}
