/// Google orders: what each charge of a Google purchase cost in the buyer's region, and what was refunded of it.
///
/// Facts of the scenario: a purchase's buyer country is its `regionCode`; each region sells in its own currency at
/// a regional price (the product's price converted at fixed rates, rounded to the currency's minor unit), VAT
/// included in VAT countries; the tax of one unit is `price x rate / (100 + rate)` rounded (half up) to the minor
/// unit. A line of `q` units costs `q` unit prices and `q` unit taxes. A full void refunds what is left of the
/// order; a quantity-based part refunds its units. Parts are `PENDING` for `pendingPartMillis` after they were
/// made for one part in four, then `PROCESSED_SUCCESSFULLY`.
extension Scenario {
    /// One region: its currency and VAT rate in percent (0: no VAT, prices without tax).
    public struct Region: Sendable, Equatable {
        public var currency: String
        public var vatPercent: Int64
    }

    /// The regions purchases come from (``regionCode(plan:)``).
    public static let regions: [String: Region] = [
        "US": Region(currency: "USD", vatPercent: 0), "DE": Region(currency: "EUR", vatPercent: 19),
        "GB": Region(currency: "GBP", vatPercent: 20), "JP": Region(currency: "JPY", vatPercent: 10),
        "FR": Region(currency: "EUR", vatPercent: 20), "BR": Region(currency: "BRL", vatPercent: 0),
        "IN": Region(currency: "INR", vatPercent: 18), "CA": Region(currency: "CAD", vatPercent: 0),
    ]

    /// Units of each currency per US dollar, in micros.
    static let usdRateMicros: [String: Int64] = [
        "USD": 1_000_000, "EUR": 920_000, "GBP": 790_000, "JPY": 150_000_000, "BRL": 5_000_000, "INR": 83_000_000,
        "CAD": 1_360_000,
    ]

    /// ISO 4217 minor units of the regions' currencies.
    static let minorUnits: [String: Int] = [
        "USD": 2, "EUR": 2, "GBP": 2, "JPY": 0, "BRL": 2, "INR": 2, "CAD": 2,
    ]

    /// How long a pending partial refund stays pending.
    public static let pendingPartMillis: Int64 = 3 * 86_400_000

    /// What one charge cost.
    public struct OrderPrice: Sendable, Equatable {
        public var country: String
        public var currency: String
        /// One unit, tax included, nanos.
        public var unitNanos: Int64
        /// The tax in one unit, nanos.
        public var unitTaxNanos: Int64
        public var quantity: Int
    }

    /// The price of a product in a region, nanos of the region's currency, rounded to its minor unit.
    func regionalPriceNanos(_ product: SimulatedProduct, region: Region) -> Int64 {
        let micros = product.priceMilli * 1000
        if product.currency == region.currency { return micros * 1000 }
        let source = Self.usdRateMicros[product.currency] ?? 1_000_000
        let target = Self.usdRateMicros[region.currency] ?? 1_000_000
        let usdMicros = micros * 1_000_000 / source
        let regional = usdMicros * target / 1_000_000
        return Self.roundToMinor(regional * 1000, currency: region.currency)
    }

    /// Nanos rounded half up to the currency's minor unit.
    static func roundToMinor(_ nanos: Int64, currency: String) -> Int64 {
        var step: Int64 = 1
        for _ in 0..<(9 - (minorUnits[currency] ?? 2)) { step *= 10 }
        return (nanos + step / 2) / step * step
    }

    /// The price of charge `charge` of a Google plan.
    func orderPrice(plan index: Int, charge: Int) -> OrderPrice {
        let plan = plans[index]
        let country = regionCode(plan: index)
        let region = Self.regions[country] ?? Region(currency: "USD", vatPercent: 0)
        let unit = regionalPriceNanos(product(plan, charge: charge), region: region)
        let tax =
            region.vatPercent == 0
            ? 0 : Self.roundToMinor(unit * region.vatPercent / (100 + region.vatPercent), currency: region.currency)
        return OrderPrice(
            country: country, currency: region.currency, unitNanos: unit, unitTaxNanos: tax,
            quantity: plan.isOneTime ? Int(plan.quantity) : 1)
    }

    /// When a partial refund made at `createMillis` is processed: 1 to 20 seconds after its voided row's time (the
    /// Orders API's refund clock is not the voided list's), or `pendingPartMillis` later for one part in four.
    func partProcessedMillis(_ refund: RefundRecord) -> Int64 {
        SplitMix64.mix(idSalt, UInt64(refund.plan), UInt64(refund.eventMillis)) % 4 == 0
            ? refund.eventMillis + Self.pendingPartMillis : partCreatedMillis(refund) + 500
    }

    /// When the Orders API says a partial refund was created: 1 to 20 seconds after the voided row's
    /// `voidedTimeMillis`, as Google's two clocks differ.
    func partCreatedMillis(_ refund: RefundRecord) -> Int64 {
        refund.eventMillis + 1000
            + Int64(SplitMix64.mix(idSalt, UInt64(refund.plan), 7, UInt64(refund.eventMillis)) % 19_000)
    }

    /// Whether an order's `refundEvent.refundDetails.total` states everything refunded (the partial refunds
    /// before it included) rather than what the full refund itself gave back. Google's reference allows either
    /// reading ("the total amount refunded"); the scenario uses both, one order in two.
    func statesCumulativeRefund(plan index: Int) -> Bool {
        SplitMix64.mix(idSalt, UInt64(index), 11) % 2 == 0
    }

    /// The plan and charge an order id names, if it is one of a Google app's charges.
    func googleOrder(_ orderId: String) -> (plan: Int, charge: Int)? {
        // Read as bytes: Foundation's search and replace were a fifth of the simulator's time on a batch of 1000.
        guard orderId.hasPrefix("GPA.") else { return nil }
        let bytes = Array(orderId.utf8.dropFirst(4))
        var charge = 0
        var bodyEnd = bytes.count
        if let dots = bytes.indices.dropLast().first(where: { bytes[$0] == 0x2E && bytes[$0 + 1] == 0x2E }) {
            guard let renewal = Int(String(decoding: bytes[(dots + 2)...], as: UTF8.self)), renewal >= 0 else {
                return nil
            }
            charge = renewal + 1
            bodyEnd = dots
        }
        let digits = bytes[..<bodyEnd].filter { $0 != UInt8(ascii: "-") }
        guard digits.count == 17, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            let index = Int(String(decoding: digits.dropFirst(4), as: UTF8.self)),
            index < plans.count, spec.apps[Int(plans[index].app)].platform == .google,
            charge < plans[index].chargeCount, orderId == self.orderId(plan: index, charge: charge)
        else { return nil }
        return (index, charge)
    }

    /// A refund Google made **without revoking** (the voided list never shows it; only the order's `state` and
    /// `orderHistory` do): one Google subscription in ten has each of its charges refunded this way a day after it
    /// was made, unless the charge is voided. Returns when, or nil.
    func refundWithoutRevocation(plan index: Int, charge: Int) -> Int64? {
        let plan = plans[index]
        guard !plan.isOneTime, spec.apps[Int(plan.app)].platform == .google,
            SplitMix64.mix(idSalt, UInt64(index), 11) % 10 == 0,
            !refunds(ofPlan: index).contains(where: { Int(refunds[Int($0)].charge) == charge })
        else { return nil }
        return plan.chargeMillis(charge, periods: periods(plan)) + 86_400_000
    }

    /// The refunds of one order (charge) that happened by `now`, oldest first.
    func orderRefunds(plan index: Int, charge: Int, at now: Int64) -> [RefundRecord] {
        refunds(ofPlan: index).map { refunds[Int($0)] }
            .filter { Int($0.charge) == charge && $0.eventMillis <= now }
            .sorted { $0.eventMillis < $1.eventMillis }
    }
}
