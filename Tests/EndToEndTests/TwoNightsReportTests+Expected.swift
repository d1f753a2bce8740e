import Foundation
import StoreSimulator

extension TwoNightsReportTests {
    /// The truth grouped by day and platform (and currency), up to what the stored checkpoints say was read.
    static func expected(
        _ simulator: StoreSimulator, knownTokens: Set<String>, googleUpTo: Int64, googleFrom: Int64, appleUpTo: Int64,
        askedOrders: [String: Int64] = [:]
    ) -> Set<Group> {
        let truth = simulator.groundTruth()
        var tally = Tally()
        addApple(truth, upTo: appleUpTo, to: &tally)
        addGoogle(truth, from: googleFrom, upTo: googleUpTo, askedOrders: askedOrders, to: &tally)
        return tally.groupSet
    }

    /// The truth's entries added up as the report groups them, exact until printed.
    struct Tally {
        var groups: [String: Group] = [:]
        /// The groups with at least one known amount.
        var known: Set<String> = []

        mutating func add(
            day: String, platform: String, currency: String, source: String, quantity: Int, nanos: Int64?,
            tax: Int64? = nil, reversal: Bool = false, family: Bool = false, notRevoked: Bool = false
        ) {
            let key = "\(day)|\(platform)|\(currency)|\(source)"
            var group = groups[key] ?? Group(day: day, platform: platform, currency: currency, source: source)
            if reversal {
                // A negative entry: the refund's units and amount back out (a family revoke moved none).
                group.reversed += 1
                if !family {
                    group.quantity -= quantity
                    if let nanos {
                        group.amountNanos -= TwoNightsReportTests.rounded(nanos, currency)
                        group.taxKnown = false
                        known.insert(key)
                    } else {
                        group.unknownAmount += 1
                    }
                }
            } else if family {
                group.familyRevokes += 1
            } else {
                group.refunds += 1
                group.quantity += quantity
                if notRevoked { group.notRevoked += 1 }
                if let nanos {
                    group.amountNanos += TwoNightsReportTests.rounded(nanos, currency)
                    if let tax {
                        group.taxNanos += TwoNightsReportTests.rounded(tax, currency)
                    } else {
                        group.taxKnown = false
                    }
                    known.insert(key)
                } else {
                    group.unknownAmount += 1
                }
            }
            groups[key] = group
        }

        /// The groups as the report prints them.
        var groupSet: Set<Group> {
            Set(
                groups.map { key, group in
                    var group = group
                    group.gross =
                        known.contains(key) ? TwoNightsReportTests.text(group.amountNanos, group.currency) : nil
                    group.tax =
                        known.contains(key) && group.taxKnown
                        ? TwoNightsReportTests.text(group.taxNanos, group.currency) : nil
                    group.amountNanos = 0
                    group.taxNanos = 0
                    group.taxKnown = true
                    return group
                })
        }
    }

    /// Apple's refunds and reversals up to `upTo`.
    static func addApple(_ truth: GroundTruth, upTo appleUpTo: Int64, to tally: inout Tally) {
        for refund in truth.appleRefunds where refund.revocationDate <= appleUpTo {
            // From the scenario's facts: the unit price times the units bought, times the refunded share (exact in
            // nanos: milliunits x 10^6, milli-percent / 10^5); a family revoke moves no money.
            let total = refund.unitPriceMilli * Int64(refund.quantity) * 1_000_000
            let family = refund.revocationType == "FAMILY_REVOKE"
            let nanos =
                refund.revocationType == "REFUND_PRORATED"
                ? total / 100_000 * Int64(refund.revocationPercentage ?? 100_000) : total
            tally.add(
                day: utcDay(refund.revocationDate), platform: "apple", currency: refund.currency,
                source: family ? "none" : "store", quantity: refund.quantity, nanos: family ? nil : nanos,
                family: family)
            if let reversed = refund.reversedDate, reversed <= appleUpTo {
                tally.add(
                    day: utcDay(reversed), platform: "apple", currency: refund.currency,
                    source: family ? "none" : "store", quantity: refund.quantity, nanos: family ? nil : nanos,
                    reversal: true, family: family)
            }
        }
    }

    /// Google's voids read from `googleFrom` to `googleUpTo`, and the refunds storerecon saw re-reading orders.
    static func addGoogle(
        _ truth: GroundTruth, from googleFrom: Int64, upTo googleUpTo: Int64, askedOrders: [String: Int64],
        to tally: inout Tally
    ) {
        // Google: what the Orders API says was refunded, from the scenario's facts: the buyer region's unit price
        // and tax times the units refunded (a part's own units; a whole-order void, what the parts left).
        let parts = Dictionary(grouping: truth.googleVoids.filter { $0.voidedQuantity != nil }, by: \.orderId)
        for void in truth.googleVoids
        where void.recorded && void.recordedTimeMillis >= googleFrom && void.recordedTimeMillis <= googleUpTo {
            let earlierParts = (parts[void.orderId] ?? []).filter { $0.voidedTimeMillis <= void.voidedTimeMillis }
            let units = void.voidedQuantity ?? (void.orderQuantity - earlierParts.reduce(0) { $0 + $1.voidedQuantity! })
            tally.add(
                day: utcDay(void.voidedTimeMillis), platform: "google", currency: void.currency, source: "store",
                quantity: units, nanos: void.unitPriceNanos * Int64(units), tax: void.unitTaxNanos * Int64(units))
        }
        // Refunds Google made without revoking, of the orders storerecon re-read (when it last read them): the whole
        // order's regional price and tax.
        for refund in truth.googleRefundsWithoutRevocation {
            guard let asked = askedOrders[refund.orderId], refund.refundMillis <= asked else { continue }
            tally.add(
                day: utcDay(refund.refundMillis), platform: "google", currency: refund.currency, source: "store",
                quantity: 1, nanos: refund.totalNanos, tax: refund.taxNanos, notRevoked: true)
        }
        // A void the voided list has not shown yet (recorded late) is, in the order, a refund like those: seen when
        // the order is re-read, until the voided list shows it.
        let listed = Set(
            truth.googleVoids.filter {
                $0.recorded && $0.recordedTimeMillis >= googleFrom && $0.recordedTimeMillis <= googleUpTo
            }.map(\.orderId))
        for void in truth.googleVoids where void.voidedQuantity == nil && !listed.contains(void.orderId) {
            guard let asked = askedOrders[void.orderId], void.voidedTimeMillis <= asked else { continue }
            tally.add(
                day: utcDay(void.voidedTimeMillis), platform: "google", currency: void.currency, source: "store",
                quantity: 1, nanos: void.unitPriceNanos * Int64(void.orderQuantity),
                tax: void.unitTaxNanos * Int64(void.orderQuantity), notRevoked: true)
        }
    }
}
