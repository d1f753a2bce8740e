import Foundation

/// An app's `refundRequests:` block: rules evaluated top-down (first match wins), then `default`.
///
/// ```yaml
/// refundRequests:
///   rules:
///     - when: { delivered: false }
///       prefer: grant
///     - when: { consumedPercentAtLeast: 50, tenureDaysAtLeast: 30 }
///       prefer: decline
///   default: data_only
/// ```
public struct RefundRequestRules: Decodable, Sendable, Equatable {
    /// The rules, in order.
    public var rules: [RefundRequestRule]
    /// The preference when no rule matches (`data_only` when unset).
    public var fallback: RefundPreference

    enum CodingKeys: String, CodingKey, CaseIterable {
        case rules
        case fallback = "default"
    }

    /// Rules in code (tests, defaults).
    public init(rules: [RefundRequestRule] = [], fallback: RefundPreference = .dataOnly) {
        self.rules = rules
        self.fallback = fallback
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rules = try container.decodeIfPresent([RefundRequestRule].self, forKey: .rules) ?? []
        fallback = try container.decodeIfPresent(RefundPreference.self, forKey: .fallback) ?? .dataOnly
    }

    /// The first rule that matches, as its label (`rules[2]`) and preference, else `default`.
    public func preference(for subject: RuleSubject) -> (rule: String, preference: RefundPreference) {
        for (index, rule) in rules.enumerated() where rule.when.matches(subject) {
            return ("rules[\(index)]", rule.prefer)
        }
        return ("default", fallback)
    }
}

/// One rule: a condition and the preference it gives.
public struct RefundRequestRule: Decodable, Sendable, Equatable {
    /// Every key set must hold (an empty `when` matches everything).
    public var when: RuleCondition
    /// The answer preferred when it matches.
    public var prefer: RefundPreference

    enum CodingKeys: String, CodingKey, CaseIterable { case when, prefer }

    /// A rule in code.
    public init(when: RuleCondition, prefer: RefundPreference) {
        self.when = when
        self.prefer = prefer
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        when = try container.decodeIfPresent(RuleCondition.self, forKey: .when) ?? RuleCondition()
        prefer = try container.decode(RefundPreference.self, forKey: .prefer)
    }
}

/// What a rule's `when` may test. A key about a figure that is unknown for the request (no consumption given, no
/// tenure known) does not match.
public struct RuleCondition: Decodable, Sendable, Equatable {
    /// Product ids.
    public var products: [String]?
    /// ISO 3166-1 alpha-2 country codes.
    public var countries: [String]?
    /// Whether the purchase was delivered.
    public var delivered: Bool?
    /// Consumption of at least this many percent.
    public var consumedPercentAtLeast: Double?
    /// Consumption below this many percent.
    public var consumedPercentBelow: Double?
    /// At least this many days since the customer's first purchase.
    public var tenureDaysAtLeast: Int?
    /// At least this many earlier refunds of the customer in the ledger.
    public var priorRefundsAtLeast: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case products, countries, delivered, consumedPercentAtLeast, consumedPercentBelow, tenureDaysAtLeast
        case priorRefundsAtLeast
    }

    /// A condition in code; every key unset matches everything.
    public init(
        products: [String]? = nil, countries: [String]? = nil, delivered: Bool? = nil,
        consumedPercentAtLeast: Double? = nil, consumedPercentBelow: Double? = nil, tenureDaysAtLeast: Int? = nil,
        priorRefundsAtLeast: Int? = nil
    ) {
        self.products = products
        self.countries = countries
        self.delivered = delivered
        self.consumedPercentAtLeast = consumedPercentAtLeast
        self.consumedPercentBelow = consumedPercentBelow
        self.tenureDaysAtLeast = tenureDaysAtLeast
        self.priorRefundsAtLeast = priorRefundsAtLeast
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        products = try container.decodeIfPresent([String].self, forKey: .products)
        countries = try container.decodeIfPresent([String].self, forKey: .countries)?.map { $0.uppercased() }
        delivered = try container.decodeIfPresent(Bool.self, forKey: .delivered)
        consumedPercentAtLeast = try container.decodeIfPresent(Double.self, forKey: .consumedPercentAtLeast)
        consumedPercentBelow = try container.decodeIfPresent(Double.self, forKey: .consumedPercentBelow)
        tenureDaysAtLeast = try container.decodeIfPresent(Int.self, forKey: .tenureDaysAtLeast)
        priorRefundsAtLeast = try container.decodeIfPresent(Int.self, forKey: .priorRefundsAtLeast)
        for (key, value) in [
            (CodingKeys.consumedPercentAtLeast, consumedPercentAtLeast), (.consumedPercentBelow, consumedPercentBelow),
        ] {
            if let value, !(0...100).contains(value) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected a percentage from 0 to 100")
            }
        }
        // Apple's storefronts are alpha-3 (DEU) and stores.md's countries alpha-2 (DE): a code of another form
        // would make the rule never match, without a word.
        if let bad = countries?.first(where: { $0.count != 2 || !$0.allSatisfy({ $0.isASCII && $0.isLetter }) }) {
            throw DecodingError.dataCorruptedError(
                forKey: .countries, in: container, debugDescription: "\(bad): expected an ISO 3166-1 alpha-2 code (DE)")
        }
        for (key, value) in [
            (CodingKeys.tenureDaysAtLeast, tenureDaysAtLeast), (.priorRefundsAtLeast, priorRefundsAtLeast),
        ] {
            if let value, value < 0 {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected 0 or more")
            }
        }
    }

    /// Whether every key set holds for `subject`.
    public func matches(_ subject: RuleSubject) -> Bool {
        if let products, !products.contains(subject.productId ?? "") { return false }
        if let countries, !countries.contains(subject.country ?? "") { return false }
        if let delivered, (subject.facts.deliveryStatus == .delivered) != delivered { return false }
        let consumed = subject.facts.consumptionMilli
        if let least = consumedPercentAtLeast {
            guard let consumed, consumed >= Self.milli(least) else { return false }
        }
        if let below = consumedPercentBelow {
            guard let consumed, consumed < Self.milli(below) else { return false }
        }
        if let least = tenureDaysAtLeast {
            guard let tenure = subject.figures.tenureDays, tenure >= least else { return false }
        }
        if let least = priorRefundsAtLeast, subject.figures.priorRefunds < least { return false }
        return true
    }

    private static func milli(_ percent: Double) -> Int { Int((percent * 1000).rounded()) }
}

/// What a rule is evaluated on.
public struct RuleSubject: Sendable, Equatable {
    /// The product id.
    public var productId: String?
    /// The country (alpha-2).
    public var country: String?
    /// The backend's facts.
    public var facts: ConsumptionFacts
    /// What the ledger knows.
    public var figures: LedgerFigures

    /// Creates a subject.
    public init(productId: String?, country: String?, facts: ConsumptionFacts, figures: LedgerFigures) {
        self.productId = productId
        self.country = country
        self.facts = facts
        self.figures = figures
    }
}
