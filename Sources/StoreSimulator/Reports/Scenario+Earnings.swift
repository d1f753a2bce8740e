import Foundation

/// Google Play earnings reports generated from the scenario: every refund of a Google app's orders as a
/// `Charge refund` row (minus what was refunded net of tax, buyer currency) and a `Google fee refund` row (the 15 %
/// fee given back), in US-Pacific calendar months. The cases finance meets are in it: a refund on a month's last
/// Pacific day is booked on the next day, in the next month's file (settlement lag); refunds made without revocation
/// are booked too (the voided list never shows them); quantity-based parts are `Partial` refunds of their units.
extension Scenario {
    /// One earnings row.
    struct EarningsRow {
        var orderId: String
        var bookedMillis: Int64
        var kind: String
        var refundType: String
        var productId: String
        var country: String
        var currency: String
        var buyerNanos: Int64
        var merchantNanos: Int64
    }

    /// The Cloud Storage bucket of app `app`'s developer account.
    static func earningsBucket(app: Int) -> String { "pubsite_prod_rev_\(earningsAccount(app: app))" }

    static func earningsAccount(app: Int) -> Int { 1_000_000_000 + app }

    /// The refund rows of Google app `app` booked by `now`, oldest first.
    func earningsRows(app: Int, now: Int64) -> [EarningsRow] {
        var rows: [EarningsRow] = []
        for (index, plan) in plans.enumerated() where Int(plan.app) == app {
            for charge in 0..<plan.chargeCount {
                for (millis, units, partial) in refundBookings(plan: index, charge: charge, now: now) {
                    rows += refundRows(plan: index, charge: charge, millis: millis, units: units, partial: partial)
                }
            }
        }
        return rows.filter { $0.bookedMillis <= now }.sorted {
            ($0.bookedMillis, $0.orderId, $0.kind) < ($1.bookedMillis, $1.orderId, $1.kind)
        }
    }

    /// When each refund of a charge happened and how many units it refunded, as the Orders API tells it.
    private func refundBookings(plan index: Int, charge: Int, now: Int64) -> [(Int64, Int64, Bool)] {
        let plan = plans[index]
        let quantity = Int64(plan.isOneTime ? Int(plan.quantity) : 1)
        var refunded: Int64 = 0
        var bookings: [(Int64, Int64, Bool)] = []
        var full = false
        for refund in orderRefunds(plan: index, charge: charge, at: now) {
            if refund.kind == .partialQuantity {
                bookings.append((refund.eventMillis, Int64(refund.quantity), true))
                refunded += Int64(refund.quantity)
            } else if !full {
                full = true
                bookings.append((refund.eventMillis, max(0, quantity - refunded), false))
            }
        }
        if bookings.isEmpty, let silent = refundWithoutRevocation(plan: index, charge: charge), silent <= now {
            bookings.append((silent, quantity, false))
        }
        return bookings.filter { $0.1 > 0 }
    }

    private func refundRows(plan index: Int, charge: Int, millis: Int64, units: Int64, partial: Bool) -> [EarningsRow] {
        let price = orderPrice(plan: index, charge: charge)
        let net = (price.unitNanos - price.unitTaxNanos) * units
        let fee = Self.roundToMinor(net * 15 / 100, currency: price.currency)
        // A refund on the last Pacific day of a month is booked by Google on the next day.
        let day = PacificDay.number(millis: millis)
        let lastDay = PacificDay.date(dayNumber: day + 1).hasSuffix("-01")
        let booked = lastDay ? PacificDay.nextMidnight(after: millis) + 3_600_000 : millis
        func row(_ kind: String, _ nanos: Int64) -> EarningsRow {
            EarningsRow(
                orderId: orderId(plan: index, charge: charge), bookedMillis: booked, kind: kind,
                refundType: partial ? "Partial" : "Full", productId: product(plans[index], charge: charge).productId,
                country: price.country, currency: price.currency, buyerNanos: nanos,
                merchantNanos: Self.toUSD(nanos, from: price.currency))
        }
        return [row("Charge refund", -net), row("Google fee refund", fee)]
    }

    /// `nanos` of `currency` in US dollars at the scenario's fixed rates, rounded to the cent.
    static func toUSD(_ nanos: Int64, from currency: String) -> Int64 {
        let rate = usdRateMicros[currency] ?? 1_000_000
        let usd = Int64((Double(nanos) * 1_000_000 / Double(rate)).rounded())
        return roundToMinor(usd, currency: "USD")
    }

    /// The earnings CSV of app `app` for Pacific month `month` (`YYYY-MM`), or `nil` when it had no transactions.
    func earningsCSV(app: Int, month: String, now: Int64) -> [UInt8]? {
        let rows = earningsRows(app: app, now: now).filter { Self.pacificMonth($0.bookedMillis) == month }
        guard !rows.isEmpty else { return nil }
        var text =
            "Description,Transaction Date,Transaction Time,Tax Type,Transaction Type,Refund Type,Product Title,"
            + "Product id,Product Type,Sku Id,Hardware,Buyer Country,Buyer State,Buyer Postal Code,Buyer Currency,"
            + "Amount (Buyer Currency),Currency Conversion Rate,Merchant Currency,Amount (Merchant Currency),"
            + "Base Plan ID,Offer ID\r\n"
        let package = spec.apps[app].storeId
        for row in rows {
            let date = Date(timeIntervalSince1970: Double(row.bookedMillis) / 1000)
            let fields = [
                row.orderId, Self.format(date, "MMM d, yyyy"), Self.format(date, "h:mm:ss a zzz"), "", row.kind,
                row.refundType, row.productId, package, "1", row.productId, "", row.country, "", "", row.currency,
                Self.decimal(row.buyerNanos, minor: Self.minorUnits[row.currency] ?? 2), "", "USD",
                Self.decimal(row.merchantNanos, minor: 2), "", "",
            ]
            text += fields.map { $0.contains(",") ? "\"\($0)\"" : $0 }.joined(separator: ",") + "\r\n"
        }
        return Array(text.utf8)
    }

    /// The months (`YYYY-MM`) with earnings of app `app` that have closed by `now`.
    func earningsMonths(app: Int, now: Int64) -> [String] {
        let current = Self.pacificMonth(now)
        return Array(Set(earningsRows(app: app, now: now).map { Self.pacificMonth($0.bookedMillis) }))
            .filter { $0 < current }.sorted()
    }

    static func pacificMonth(_ millis: Int64) -> String {
        String(PacificDay.date(dayNumber: PacificDay.number(millis: millis)).prefix(7))
    }

    static func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = PacificDay.timeZone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }

    /// Nanos as a decimal with `minor` digits (exact: the amounts are rounded to the minor unit already).
    static func decimal(_ nanos: Int64, minor: Int) -> String {
        let negative = nanos < 0
        let magnitude = nanos.magnitude
        let whole = magnitude / 1_000_000_000
        var text = (negative ? "-" : "") + String(whole)
        if minor > 0 {
            let fraction = String(magnitude % 1_000_000_000)
            let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
            text += "." + padded.prefix(minor)
        }
        return text
    }
}
