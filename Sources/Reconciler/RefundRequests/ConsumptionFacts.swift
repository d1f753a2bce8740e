import Foundation

/// The app backend's facts about one purchase (`consumption_fact`): what the answer to a store is made of.
public struct ConsumptionFacts: Sendable, Equatable, Codable {
    /// Whether the customer agreed to share their consumption data (Apple requires it).
    public var customerConsented: Bool
    /// Whether the purchase was delivered.
    public var deliveryStatus: DeliveryStatus
    /// Consumption in milliunits (100000 = 100 %), when known.
    public var consumptionMilli: Int?
    /// Whether a free sample, trial or description was offered before the purchase.
    public var sampleContentProvided: Bool
    /// When the backend knew this.
    public var asOf: Date

    /// Creates facts.
    public init(
        customerConsented: Bool, deliveryStatus: DeliveryStatus, consumptionMilli: Int?, sampleContentProvided: Bool,
        asOf: Date
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.consumptionMilli = consumptionMilli
        self.sampleContentProvided = sampleContentProvided
        self.asOf = asOf
    }
}

/// What storerecon knows itself about the customer and the purchase (from the ledger and the signed transaction).
public struct LedgerFigures: Sendable, Equatable, Codable {
    /// Whole days since the customer's first purchase, when known.
    public var tenureDays: Int?
    /// Refunds of this customer already in the ledger.
    public var priorRefunds: Int
    /// The share of the current subscription period used when the request came, milliunits (subscriptions only).
    public var periodUsedMilli: Int?

    /// Creates figures.
    public init(tenureDays: Int?, priorRefunds: Int, periodUsedMilli: Int?) {
        self.tenureDays = tenureDays
        self.priorRefunds = priorRefunds
        self.periodUsedMilli = periodUsedMilli
    }
}
