import Foundation

/// Apple FINANCIAL reports generated from the scenario: per Apple fiscal month (a 4-4-5 week calendar from the day
/// after the last Saturday of September), the refunds of an Apple app's production purchases dated in the period
/// (US Pacific) as `R` rows, aggregated per product, country, price and currency. A full refund is minus the units
/// at the unit price; a prorated refund is one unit (-1) at its refunded amount; family revokes move no money and
/// refunds reversed before the period ends are not booked.
extension Scenario {
    /// The period of fiscal month `month` (`YYYY-MM`): its first and last Pacific day numbers.
    static func fiscalPeriod(_ month: String) -> (first: Int64, last: Int64)? {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, (1...12).contains(parts[1]) else { return nil }
        let (year, number) = (parts[0], parts[1])
        let fiscalYear = number >= 10 ? year + 1 : year
        let start = lastSaturdayOfSeptember(fiscalYear - 1) + 1
        let end = lastSaturdayOfSeptember(fiscalYear)
        let weeks = [4, 4, 5, 4, 4, 5, 4, 4, 5, 4, 4, 5]
        let position = (number + 2) % 12  // October is 0
        let first = start + Int64(weeks.prefix(position).reduce(0, +) * 7)
        let last = position == 11 ? end : first + Int64(weeks[position] * 7) - 1
        return (first, last)
    }

    /// The Pacific day number of the last Saturday of September of `year`.
    static func lastSaturdayOfSeptember(_ year: Int) -> Int64 {
        let september30 = TimeFormat.daysFromCivil(year, 9, 30)
        // 1970-01-01 was a Thursday (weekday 4 with Sunday 0); Saturday is 6.
        let weekday = ((september30 % 7) + 7 + 4) % 7
        return september30 - (weekday + 1) % 7
    }

    /// The FINANCIAL report text of Apple app `app` for fiscal month `month`, or `nil` before the period has ended or
    /// when it has no rows.
    func financeReport(app: Int, month: String, now: Int64) -> [UInt8]? {
        guard let period = Self.fiscalPeriod(month), PacificDay.number(millis: now) > period.last else { return nil }
        let units = returnedUnits(app: app, period: period)
        // A period without sales or returns has no report (App Store Connect answers 404).
        guard !units.isEmpty else { return nil }
        let start = Self.appleDate(period.first)
        let end = Self.appleDate(period.last)
        var text =
            "Start Date\tEnd Date\tUPC\tISRC/ISBN\tVendor Identifier\tQuantity\tPartner Share\tExtended Partner Share\t"
            + "Partner Share Currency\tSales or Return\tApple Identifier\tArtist/Show/Developer/Author\tTitle\t"
            + "Label/Studio/Network/Developer/Publisher\tGrid\tProduct Type Identifier\tISAN/Other Identifier\t"
            + "Country Of Sale\tPre-order Flag\tPromo Code\tCustomer Price\tCustomer Currency\n"
        var totalUnits = 0
        var totalAmountMilli: Int64 = 0
        let minor = { (currency: String) in Self.minorUnits[currency] ?? 2 }
        for key in units.keys.sorted() {
            let count = units[key] ?? 0
            let shareMilli = Self.roundMilliToMinor(key.priceMilli * 70 / 100, currency: key.currency)
            let appleId = String(spec.apps[app].appAppleId ?? 0)
            let fields = [
                start, end, "", "", key.product, String(-count), Self.milli(shareMilli, minor(key.currency)),
                Self.milli(-shareMilli * Int64(count), minor(key.currency)), key.currency, "R", appleId,
                "Example Developer", key.product, "", "", "IAY", "", key.country, "", "",
                Self.milli(key.priceMilli, minor(key.currency)), key.currency,
            ]
            text += fields.joined(separator: "\t") + "\n"
            totalUnits -= count
            totalAmountMilli -= shareMilli * Int64(count)
        }
        text +=
            "\nTotal_Rows\t\(units.count)\nTotal_Amount\t\(Self.milli(totalAmountMilli, 2))\nTotal_Units\t\(totalUnits)\n"
        return Array(text.utf8)
    }

    /// One line of a FINANCIAL report: a product sold in a country, currency and price.
    private struct FinanceLineKey: Hashable, Comparable {
        var product: String
        var country: String
        var currency: String
        var priceMilli: Int64

        static func < (a: FinanceLineKey, b: FinanceLineKey) -> Bool {
            (a.product, a.country, a.currency, a.priceMilli) < (b.product, b.country, b.currency, b.priceMilli)
        }
    }

    /// The units of app `app` returned in the fiscal period and not reversed by its end, by report line.
    private func returnedUnits(app: Int, period: (first: Int64, last: Int64)) -> [FinanceLineKey: Int] {
        var units: [FinanceLineKey: Int] = [:]
        let periodEnd = PacificDay.nextMidnight(after: period.last * 86_400_000 + 12 * 3_600_000)
        for refund in refunds where Int(plans[Int(refund.plan)].app) == app {
            let plan = plans[Int(refund.plan)]
            let day = PacificDay.number(millis: refund.eventMillis)
            guard !plan.flags.contains(.sandbox), day >= period.first, day <= period.last,
                refund.kind == .full || refund.kind == .prorated, refund.reversedMillis > periodEnd
            else { continue }
            let product = self.product(plan, charge: Int(refund.charge))
            let country = Self.alpha2[product.storefront] ?? "US"
            if refund.kind == .full {
                let key = FinanceLineKey(
                    product: product.productId, country: country, currency: product.currency,
                    priceMilli: product.priceMilli)
                units[key, default: 0] += Int(plan.quantity)
            } else {
                // The exact refunded amount (milliunits x milli-percent), rounded once to the minor unit.
                let exact = product.priceMilli * Int64(plan.quantity) * Int64(refund.percentage)
                let key = FinanceLineKey(
                    product: product.productId, country: country, currency: product.currency,
                    priceMilli: Self.roundHundredThousandths(exact, currency: product.currency))
                units[key, default: 0] += 1
            }
        }
        return units
    }

    static let alpha2 = ["USA": "US", "DEU": "DE", "GBR": "GB", "JPN": "JP", "FRA": "FR", "CAN": "CA"]

    static func appleDate(_ dayNumber: Int64) -> String {
        let iso = PacificDay.date(dayNumber: dayNumber)
        let parts = iso.split(separator: "-")
        return "\(parts[1])/\(parts[2])/\(parts[0])"
    }

    /// Milliunits rounded half to even to the currency's minor unit.
    static func roundMilliToMinor(_ milli: Int64, currency: String) -> Int64 {
        var step: Int64 = 1
        for _ in 0..<(3 - min(3, minorUnits[currency] ?? 2)) { step *= 10 }
        var (whole, remainder) = milli.quotientAndRemainder(dividingBy: step)
        if remainder * 2 > step || (remainder * 2 == step && whole % 2 != 0) { whole += 1 }
        return whole * step
    }

    /// Milliunits x 10^5 rounded half to even to the currency's minor unit, as milliunits.
    static func roundHundredThousandths(_ value: Int64, currency: String) -> Int64 {
        var step: Int64 = 100_000
        for _ in 0..<(3 - min(3, minorUnits[currency] ?? 2)) { step *= 10 }
        var (whole, remainder) = value.quotientAndRemainder(dividingBy: step)
        if remainder * 2 > step || (remainder * 2 == step && whole % 2 != 0) { whole += 1 }
        return whole * step / 100_000
    }

    /// Milliunits as a decimal with `minor` digits.
    static func milli(_ value: Int64, _ minor: Int) -> String {
        decimal(value * 1_000_000, minor: minor)
    }
}
