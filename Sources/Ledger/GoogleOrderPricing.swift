import Foundation
import PlayDeveloperAPI

/// What each refund of one Google order gave back, from the order's history (Orders API) and the order's revoked
/// rows in the ledger (from the voided list). Pure: no database, no store call.
///
/// The rule (https://developers.google.com/android-publisher/api-ref/rest/v3/orders):
/// - A quantity-based part (a voided row with `voidedQuantity`) takes the unclaimed `partialRefundEvents[]` entry
///   nearest in time within ``matchTolerance``, whose amount is consistent with the part's units x the unit price.
///   The event's times are Google's refund clock, not the voided row's: they differ by seconds or more, so exact
///   times never match and position in time order means nothing when a part is missing from the ledger.
/// - Every processed partial event no part claims is a refund of its own (`partial_amount`, not revoked): a goodwill
///   refund by amount, or a part older than the voided list's 30 days.
/// - The whole order's refund (`refundEvent`) gives back what remained: `min(refund total, order total - sum of
///   processed partial refunds)`, tax likewise, units = bought - units already refunded. `refundEvent.total` may be
///   cumulative ("the total amount refunded"); the rule holds under either reading.
/// - No order gives back more than it charged: when the store's own figures say otherwise, no refund of the order
///   gets an amount and ``Priced/overRefund`` says why (the order goes to the quarantine).
public enum GoogleOrderPricing {
    /// How far a partial refund event's time may lie from its voided row's.
    public static let matchTolerance: Int64 = 6 * 3_600_000

    /// A revoked row of the order in the ledger (from the voided list).
    public struct VoidedPart: Sendable, Equatable {
        /// The ledger row.
        public var rowId: Int64
        /// Units of a quantity-based part; `nil` for the whole order.
        public var units: Int?
        /// `voidedTimeMillis`.
        public var voidedMillis: Int64

        public init(rowId: Int64, units: Int?, voidedMillis: Int64) {
            self.rowId = rowId
            self.units = units
            self.voidedMillis = voidedMillis
        }
    }

    /// The amount of one revoked row.
    public struct PartPrice: Sendable, Equatable {
        public var rowId: Int64
        /// Refunded, tax included, in nanos; `nil` when unknown.
        public var gross: Int64?
        public var tax: Int64?
        public var currency: String?
        public var quantity: Int
        public var note: AmountNote?
    }

    /// What the order's history says of each of its refunds.
    public struct Priced: Sendable, Equatable {
        /// The revoked rows' amounts.
        public var parts: [PartPrice]
        /// Refunds the order shows that no revoked row stands for (not revoked: they take nothing away).
        public var unrevoked: [RefundRecord]
        /// Why the order's figures cannot be right (it refunds more than it charged), or `nil`.
        public var overRefund: String?
    }

    /// Prices the order's refunds. `payload` is the order's JSON, kept on the records of refunds without revocation.
    public static func price(_ order: PlayOrder, voided: [VoidedPart], payload: Data) -> Priced {
        let facts = OrderFacts(order)
        let quantityParts = voided.filter { $0.units != nil }.sorted {
            ($0.voidedMillis, $0.rowId) < ($1.voidedMillis, $1.rowId)
        }
        let matches = match(quantityParts, facts.events, unitPrice: facts.unitPrice)
        let whole = voided.first { $0.units == nil }
        let remainderPart = whole == nil ? finalQuantityPart(quantityParts, matches, facts) : nil
        if let reason = overRefund(facts, quantityParts: quantityParts) {
            let parts = voided.map {
                PartPrice(
                    rowId: $0.rowId, gross: nil, tax: nil, currency: facts.currency, quantity: $0.units ?? 1,
                    note: .overRefunded)
            }
            return Priced(parts: parts, unrevoked: [], overRefund: reason)
        }
        let claimedUnits = Int(
            clamping: OrderFacts.sum(
                quantityParts.map { Int64($0.rowId == remainderPart?.rowId ? 0 : $0.units ?? 0) }))
        // Units of events no part claims count as refunded whether or not Google has processed them yet; only
        // processed ones are refunds of their own.
        let unclaimedEvents = facts.events.indices.filter { matches[$0] == nil }
        let estimatedUnits = unclaimedEvents.reduce(0) { $0 + facts.estimatedUnits(facts.events[$1]) }
        let unclaimed = unclaimedEvents.filter { facts.events[$0].processed }
        let remainder = facts.remainder(alreadyRefundedUnits: claimedUnits + estimatedUnits)
        var parts: [PartPrice] = []
        for part in quantityParts where part.rowId != remainderPart?.rowId {
            let event = facts.events.indices.first { matches[$0] == part.rowId }.map { facts.events[$0] }
            parts.append(
                PartPrice(
                    rowId: part.rowId, gross: event?.gross, tax: event == nil ? nil : event?.tax ?? 0,
                    currency: event?.currency ?? facts.currency, quantity: part.units ?? 1,
                    note: event.map { $0.pending ? AmountNote.pending : nil } ?? .noRefundEvent))
        }
        if let target = whole ?? remainderPart {
            parts.append(remainder.price(rowId: target.rowId))
        }
        var unrevoked = unclaimed.compactMap { facts.events[$0].record(order, facts: facts, payload: payload) }
        // Two refunds made in the same millisecond are two refunds, not one row written twice.
        var made: [Int64: Int] = [:]
        for index in unrevoked.indices {
            guard case .orderPartial(let millis, _) = unrevoked[index].part else { continue }
            made[millis, default: 0] += 1
            unrevoked[index].part = .orderPartial(createdMillis: millis, ordinal: made[millis] ?? 1)
        }
        if whole == nil, remainderPart == nil, let record = remainder.record(order, facts: facts, payload: payload) {
            unrevoked.append(record)
        }
        return Priced(parts: parts, unrevoked: unrevoked, overRefund: nil)
    }

    /// Each quantity part's event (event index -> part row id): the nearest unclaimed event in time within the
    /// tolerance whose amount fits the part's units, pairs taken nearest first over the whole order.
    static func match(_ parts: [VoidedPart], _ events: [RefundEventFacts], unitPrice: UnitPrice?) -> [Int: Int64] {
        var pairs: [(distance: Int64, part: Int, event: Int)] = []
        for (p, part) in parts.enumerated() {
            for (e, event) in events.enumerated() {
                guard let distance = event.distance(to: part.voidedMillis), distance <= matchTolerance else { continue }
                if let unitPrice, let gross = event.gross, !unitPrice.fits(gross, units: part.units ?? 1) { continue }
                pairs.append((distance, p, e))
            }
        }
        pairs.sort { ($0.distance, $0.part, $0.event) < ($1.distance, $1.part, $1.event) }
        var claimedParts = Set<Int>()
        var matches: [Int: Int64] = [:]
        for pair in pairs where matches[pair.event] == nil && !claimedParts.contains(pair.part) {
            matches[pair.event] = parts[pair.part].rowId
            claimedParts.insert(pair.part)
        }
        return matches
    }

    /// A quantity part that is the order's final refund: no partial event claims it, the order has a `refundEvent`
    /// and no whole-order row, and the part's units are what the other parts left (Google may list the rest of an
    /// order refunded in full as a quantity-based row).
    static func finalQuantityPart(_ parts: [VoidedPart], _ matches: [Int: Int64], _ facts: OrderFacts) -> VoidedPart? {
        guard facts.refund != nil, let bought = facts.bought else { return nil }
        let matched = Set(matches.values)
        let unmatched = parts.filter { !matched.contains($0.rowId) }
        guard unmatched.count == 1, let part = unmatched.first else { return nil }
        let others = parts.reduce(0) { $0 + ($1.rowId == part.rowId ? 0 : $1.units ?? 0) }
        return part.units == bought - others ? part : nil
    }

    /// Why the order's figures refund more than it charged, or `nil`.
    static func overRefund(_ facts: OrderFacts, quantityParts: [VoidedPart]) -> String? {
        let units = Int(clamping: OrderFacts.sum(quantityParts.map { Int64($0.units ?? 0) }))
        if let bought = facts.bought, units > bought {
            return "order \(facts.orderId): voided quantities add up to \(units) units, more than the \(bought) bought"
        }
        guard let total = facts.total else { return nil }
        let partials = facts.processedGross
        if partials > total {
            return "order \(facts.orderId): partial refunds add up to \(PlayMoney.text(nanos: partials)), more than "
                + "the order's total \(PlayMoney.text(nanos: total)) \(facts.currency ?? "")"
        }
        if partials == 0, let refunded = facts.refund?.gross, refunded > total {
            return "order \(facts.orderId): refunded \(PlayMoney.text(nanos: refunded)), more than the order's total "
                + "\(PlayMoney.text(nanos: total)) \(facts.currency ?? "")"
        }
        return nil
    }
}

extension PlayMoney {
    /// Nanos as a decimal amount for messages (`6.93`, `-1800`).
    static func text(nanos: Int64) -> String {
        let (units, fraction) = nanos.quotientAndRemainder(dividingBy: 1_000_000_000)
        guard fraction != 0 else { return "\(units)" }
        var digits = String(abs(fraction))
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(nanos < 0 && units == 0 ? "-" : "")\(units).\(digits)"
    }
}
