import Foundation
import PlayDeveloperAPI

/// The figures of one order that the pricing rule reads, decoded once: money in nanos, times in milliseconds.
extension GoogleOrderPricing {
    /// The price of one unit of the order's line, tax included (the line's total over the units bought).
    struct UnitPrice: Equatable {
        var lineTotal: Int64
        var bought: Int

        /// Whether `gross` is what `units` units cost: within 2 % of the units' price and a cent, so that a
        /// currency's rounding of a share of the line passes and a part of other units does not.
        func fits(_ gross: Int64, units: Int) -> Bool {
            guard units > 0 else { return false }
            let expected = Int128(lineTotal) * Int128(units) / Int128(bought)
            let difference = abs(Int128(gross) - expected)
            return difference <= expected / 50 + 10_000_000
        }

        /// The units `gross` pays for, when it fits a whole number of them; else 0.
        func units(for gross: Int64) -> Int {
            guard lineTotal > 0 else { return 0 }
            let estimate = Int(clamping: (Int128(gross) * Int128(bought) + Int128(lineTotal) / 2) / Int128(lineTotal))
            return (1...max(1, bought)).contains(estimate) && fits(gross, units: estimate) ? estimate : 0
        }
    }

    /// One `partialRefundEvents[]` entry.
    struct RefundEventFacts: Equatable {
        var createdMillis: Int64?
        var processedMillis: Int64?
        var gross: Int64?
        var tax: Int64?
        var currency: String?
        /// `PROCESSED_SUCCESSFULLY`: the money moved.
        var processed: Bool
        /// `PENDING`: Google has not processed it yet.
        var pending: Bool

        init(_ event: PlayOrder.PartialRefundEvent, orderCurrency: String?) {
            createdMillis = event.createTime.flatMap { RFC3339Timestamp($0)?.millisecondsSinceEpoch }
            processedMillis = event.processTime.flatMap { RFC3339Timestamp($0)?.millisecondsSinceEpoch }
            gross = event.refundDetails?.total?.totalNanos
            tax = event.refundDetails?.tax?.totalNanos
            currency = event.refundDetails?.total?.currencyCode ?? orderCurrency
            processed = event.state == "PROCESSED_SUCCESSFULLY"
            pending = event.state == "PENDING"
        }

        /// How far the event's nearest time lies from `millis`; `nil` when it has no time.
        func distance(to millis: Int64) -> Int64? {
            [createdMillis, processedMillis].compactMap { $0.map { abs($0 - millis) } }.min()
        }

        /// The event as a refund of its own (a partial refund by amount, not revoked); `nil` when it has no time.
        /// It is dated when it was made (`createTime`, seconds from a voided row's time), not when Google processed
        /// it (possibly days later): a part keeps its day whether storerecon learns of it from the voided list or
        /// from the order alone.
        func record(_ order: PlayOrder, facts: OrderFacts, payload: Data) -> RefundRecord? {
            guard processed, let at = createdMillis ?? processedMillis else { return nil }
            return facts.record(
                order, part: .orderPartial(createdMillis: at), kind: .partialAmount, at: at, quantity: 1,
                amount: gross.map { .stated(gross: $0, tax: tax ?? 0, precision: 9) } ?? .none(note: nil),
                currency: currency, payload: payload)
        }
    }

    /// The whole order's refund (`refundEvent`): what remained after the partial refunds.
    struct Remainder {
        var gross: Int64?
        var tax: Int64?
        var currency: String?
        var units: Int
        var note: AmountNote?
        var at: Int64?

        func price(rowId: Int64) -> PartPrice {
            PartPrice(rowId: rowId, gross: gross, tax: tax, currency: currency, quantity: units, note: note)
        }

        /// The refund as one without revocation (no whole-order row stands for it); `nil` without a `refundEvent`.
        func record(_ order: PlayOrder, facts: OrderFacts, payload: Data) -> RefundRecord? {
            guard let at, facts.refund != nil else { return nil }
            return facts.record(
                order, part: .orderRefund, kind: .full, at: at, quantity: units,
                amount: gross.map { .stated(gross: $0, tax: tax ?? 0, precision: 9) } ?? .none(note: note),
                currency: currency, payload: payload)
        }
    }

    /// The order's figures.
    struct OrderFacts {
        var orderId: String
        var total: Int64?
        var tax: Int64?
        var currency: String?
        var bought: Int?
        var unitPrice: UnitPrice?
        var events: [RefundEventFacts]
        var refund: (gross: Int64?, tax: Int64?, currency: String?, at: Int64?)?
        var pendingRefund: Bool

        init(_ order: PlayOrder) {
            orderId = order.orderId
            total = order.total?.totalNanos
            tax = order.tax?.totalNanos
            currency = order.total?.currencyCode
            let line = order.lineItems?.first
            bought = line.map { $0.oneTimePurchaseDetails?.quantity ?? 1 }
            if let bought, bought > 0, let lineTotal = line?.total?.totalNanos ?? total, lineTotal > 0 {
                unitPrice = UnitPrice(lineTotal: lineTotal, bought: bought)
            }
            let currency = currency
            events = (order.orderHistory?.partialRefundEvents ?? []).map {
                RefundEventFacts($0, orderCurrency: currency)
            }
            refund = order.orderHistory?.refundEvent.map { event in
                (
                    event.refundDetails?.total?.totalNanos, event.refundDetails?.tax?.totalNanos,
                    event.refundDetails?.total?.currencyCode ?? currency,
                    event.eventTime.flatMap { RFC3339Timestamp($0)?.millisecondsSinceEpoch }
                )
            }
            pendingRefund = order.state == "PENDING_REFUND"
        }

        /// What the processed partial refunds gave back, tax included.
        var processedGross: Int64 { Self.sum(events.filter(\.processed).map { $0.gross ?? 0 }) }
        var processedTax: Int64 { Self.sum(events.filter(\.processed).map { $0.tax ?? 0 }) }

        /// A sum of the store's figures, held at Int64's bounds: impossible figures make an impossible order (more
        /// refunded than charged, set aside), never a crash.
        static func sum(_ values: [Int64]) -> Int64 {
            Int64(clamping: values.reduce(Int128(0)) { $0 + Int128($1) })
        }

        /// What `total` leaves after `refunded`, at least 0.
        static func left(_ total: Int64, after refunded: Int64) -> Int64 {
            Int64(clamping: max(0, Int128(total) - Int128(refunded)))
        }

        /// Units an unclaimed processed event refunded, when its amount is a whole number of units.
        func estimatedUnits(_ event: RefundEventFacts) -> Int {
            guard let unitPrice, let gross = event.gross else { return 0 }
            return unitPrice.units(for: gross)
        }

        /// The whole order's refund: `min(refund total, total - partials)`, tax likewise, the units left.
        func remainder(alreadyRefundedUnits: Int) -> Remainder {
            let units = max(1, (bought ?? 1) - alreadyRefundedUnits)
            guard let refund else {
                return Remainder(currency: currency, units: units, note: pendingRefund ? .pending : .noRefundEvent)
            }
            guard let refunded = refund.gross else {
                return Remainder(currency: refund.currency, units: units, at: refund.at)
            }
            let gross = total.map { min(refunded, Self.left($0, after: processedGross)) } ?? refunded
            let refundedTax = refund.tax ?? 0
            let tax = tax.map { min(refundedTax, Self.left($0, after: processedTax)) } ?? refundedTax
            return Remainder(gross: gross, tax: min(tax, gross), currency: refund.currency, units: units, at: refund.at)
        }

        /// A refund without revocation of this order.
        func record(
            _ order: PlayOrder, part: RefundRecord.Part, kind: RefundKind, at millis: Int64, quantity: Int,
            amount: RefundRecord.Amount, currency: String?, payload: Data
        ) -> RefundRecord {
            RefundRecord(
                platform: .google, orderId: order.orderId, part: part, originalId: order.purchaseToken ?? "",
                productId: order.lineItems?.first?.productId, refundedAt: RefundRecord.date(millis: millis),
                reasonLabel: "not_revoked", kind: kind, quantity: quantity, amount: amount, currency: currency,
                buyerCountry: order.buyerAddress?.buyerCountry,
                refundReason: order.orderHistory?.refundEvent?.refundReason, payload: payload)
        }
    }
}
