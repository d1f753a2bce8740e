import Foundation
import PlayDeveloperAPI
import Postgres

/// Pricing a voided page before it is stored, so each refund row is written once, with its amount.
///
/// The usual way writes a Google refund twice: the voided page inserts the row, and the Orders API's answer, a moment
/// later, updates it with the amount (``store(_:runId:logger:on:)``), reading the order's rows again first. For an
/// order the ledger has never seen (no refund row, no `google_order` row) every part of it that the ledger will hold
/// is on the page, so the page itself says all the rule needs (``GoogleOrderPricing``): the page's job asks for those
/// orders as soon as the page comes, and stores the page with the amounts and the orders in one transaction.
///
/// Only what the rule settles plainly is written that way: every part priced by the store, nothing pending, no refund
/// without revocation, nothing over-refunded. The other orders of the answer are stored the usual way right after
/// the page (``store(_:runId:logger:on:)``), and orders the ledger knows are asked the usual way too.
extension GoogleOrderStore {
    typealias PartPrice = GoogleOrderPricing.PartPrice

    /// A page's records with the amounts the Orders API's answer gives them, and the answer's orders split by how
    /// they are stored.
    public struct PricedAhead: Sendable {
        /// The page's records: rows of the orders in ``plain`` carry the store's amount, the others are as they came.
        public private(set) var records: [RefundRecord]
        /// The page's records as they came.
        public let original: [RefundRecord]
        /// How many of ``records`` carry the store's amount.
        public private(set) var pricedRows: Int
        /// Orders whose rows carry their amounts: stored with the page (``saveAhead(_:on:)``).
        public private(set) var plain: Answered
        /// The other orders asked: stored after the page, the usual way (``store(_:runId:logger:on:)``).
        public private(set) var rest: Answered

        /// Every order of the answer.
        public var orderIds: Set<String> { Set(plain.orders.map(\.orderId) + rest.orders.map(\.orderId)) }

        /// Moves orders from ``plain`` to ``rest``, their rows back as they came: another page holds rows of them
        /// too, so this page alone does not say all their parts.
        public mutating func demote(_ ids: Set<String>) {
            let moving = Set(plain.orders.map(\.orderId)).intersection(ids)
            guard !moving.isEmpty else { return }
            for index in records.indices
            where moving.contains(records[index].orderId) && records[index] != original[index] {
                records[index] = original[index]
                pricedRows -= 1
            }
            let staying = Set(plain.orders.map(\.orderId)).subtracting(moving)
            rest = Answered(plain.orders + rest.orders, payloads: plain.payloads + rest.payloads, rendered: false)
                .subset { !staying.contains($0) }
            plain = plain.subset { staying.contains($0) }
        }
    }

    /// Prices the page's rows of the answered orders, each order from its rows on this page alone (the caller asks
    /// only for orders the ledger does not know, see ``known(_:on:)``).
    public static func priceAhead(_ records: [RefundRecord], answered: Answered) -> PricedAhead {
        var rows: [String: [Int]] = [:]
        for (index, record) in records.enumerated() where record.platform == .google && record.revokes {
            rows[record.orderId, default: []].append(index)
        }
        var priced = records
        var plain = Set<String>()
        var pricedRows = 0
        for order in answered.orders {
            guard let indices = rows[order.orderId],
                let amounts = plainAmounts(order, parts: indices.map { (Int64($0), records[$0]) })
            else { continue }
            for (index, price) in amounts { priced[index].take(price, of: order) }
            pricedRows += amounts.count
            plain.insert(order.orderId)
        }
        return PricedAhead(
            records: priced, original: records, pricedRows: pricedRows, plain: answered.subset { plain.contains($0) },
            rest: answered.subset { !plain.contains($0) })
    }

    /// Each part's price by its index, when the order's rows are all priced by the store and nothing else is left to
    /// store (no refund without revocation, nothing pending, the order's figures adding up); otherwise `nil`.
    static func plainAmounts(_ order: PlayOrder, parts: [(Int64, RefundRecord)]) -> [Int: PartPrice]? {
        guard order.refundPending != true else { return nil }
        let voided = parts.map { id, record in
            GoogleOrderPricing.VoidedPart(
                rowId: id, units: record.kind == .partialQuantity ? record.quantity : nil,
                voidedMillis: Int64((record.refundedAt.timeIntervalSince1970 * 1000).rounded()))
        }
        let result = GoogleOrderPricing.price(order, voided: voided, payload: Data())
        guard result.overRefund == nil, result.unrevoked.isEmpty, result.parts.count == parts.count,
            result.parts.allSatisfy({ $0.gross != nil && $0.note == nil })
        else { return nil }
        return Dictionary(uniqueKeysWithValues: result.parts.map { (Int($0.rowId), $0) })
    }

    /// The ids among these that the ledger knows: a refund row of the order, or the order fetched (or refused)
    /// before. One probe by key per id.
    public func known(_ orderIds: [String], on connection: PostgresConnection) throws -> Set<String> {
        guard !orderIds.isEmpty else { return [] }
        return Set(
            try connection.query(
                """
                SELECT i.id FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
                -- Each a probe by key (LIMIT keeps the planner from turning them into joins over the app's rows).
                LEFT JOIN LATERAL (SELECT 1 AS hit FROM google_order WHERE app_id = $1 AND order_id = i.id LIMIT 1) o
                    ON true
                LEFT JOIN LATERAL (SELECT 1 AS hit FROM refund WHERE app_id = $1 AND order_id = i.id LIMIT 1) r
                    ON true
                WHERE o.hit IS NOT NULL OR r.hit IS NOT NULL
                """, [appId, PostgresTextArray(orderIds)]
            ).map { try $0.decode("id") as String })
    }

    /// In the page's transaction, before its rows: takes the app's lock of Google refund writers and moves to
    /// ``PricedAhead/rest`` (their rows back as they came) the orders of which another process stored refund rows since
    /// the look-up (``known(_:on:)``), such as the nightly orders job recording their refund without revocation: the
    /// page alone no longer says all of them, and their answer stored the usual way after the page sees both. (An
    /// answer stored meanwhile without refund rows changes nothing the page writes.) Returns whether any moved.
    public func confirmAhead(_ priced: inout PricedAhead, on connection: PostgresConnection) throws -> Bool {
        guard !priced.plain.orders.isEmpty else { return false }
        try serialize(on: connection)
        let known = Set(
            try connection.query(
                "SELECT DISTINCT order_id FROM refund WHERE app_id = $1 AND order_id = ANY ($2::text[])",
                [appId, PostgresTextArray(priced.plain.orders.map(\.orderId))]
            ).map { try $0.decode("order_id") as String })
        guard !known.isEmpty else { return false }
        priced.demote(known)
        return true
    }

    /// In the page's transaction, after its rows: the orders whose rows carry their amounts.
    public func saveAhead(_ priced: PricedAhead, on connection: PostgresConnection) throws {
        guard !priced.plain.orders.isEmpty else { return }
        try saveOrders(priced.plain, on: connection)
    }
}
