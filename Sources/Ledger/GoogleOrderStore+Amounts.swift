import Foundation
import Logging
import PlayDeveloperAPI
import Postgres

/// Storing an `orders.batchget` answer: the orders as Google sent them, and what each of their refunds gave back
/// (``GoogleOrderPricing``), in one transaction.
extension GoogleOrderStore {
    /// What storing an answer did.
    public struct Stored: Sendable, Equatable {
        /// Refund rows that got a store amount.
        public var priced = 0
        /// Refund rows still pending at Google.
        public var pending = 0
        /// Orders whose figures refund more than they charged (set aside in the quarantine).
        public var overRefunded = 0
    }

    /// An `orders.batchget` answer made ready to store: each order once (the first time the answer names it), and
    /// the columns of `google_order` already rendered, so the caller can build it beside the loop that stores.
    public struct Answered: Sendable {
        /// The orders, each once.
        public let orders: [PlayOrder]
        /// Their JSON texts, one per order.
        let payloads: [String]
        /// `saveOrders`' parameters.
        let columns: [String?]

        /// The orders and their JSON texts as Google sent them (``PlayDeveloperClient/orderTexts(in:orders:)``),
        /// kept in `google_order`. Without `rendered`, only ``subset(_:)`` of it can be stored (a page priced ahead
        /// stores its orders in two parts, each rendered once).
        public init(_ answered: [PlayOrder], payloads: [String], rendered: Bool = true) {
            precondition(payloads.count == answered.count, "one payload per order")
            var seen = Set<String>()
            var texts: [String] = []
            var orders: [PlayOrder] = []
            for (order, text) in zip(answered, payloads) where seen.insert(order.orderId).inserted {
                texts.append(text)
                orders.append(order)
            }
            self.orders = orders
            self.payloads = texts
            columns = rendered ? GoogleOrderStore.orderColumns(orders, payloads: texts) : []
        }

        /// The orders whose ids `keep` takes.
        public func subset(_ keep: (String) -> Bool) -> Answered {
            let kept = orders.indices.filter { keep(orders[$0].orderId) }
            return Answered(kept.map { orders[$0] }, payloads: kept.map { payloads[$0] })
        }
    }

    /// Stores orders and the amounts of their refunds (see ``Answered``). Must not run inside another transaction.
    public func store(
        _ answered: [PlayOrder], payloads: [String], runId: Int64?, logger: Logger, on connection: PostgresConnection
    ) throws -> Stored {
        try store(Answered(answered, payloads: payloads), runId: runId, logger: logger, on: connection)
    }

    /// Stores an answer's orders and the amounts of their refunds, in one transaction. Must not run inside another
    /// transaction.
    public func store(
        _ answered: Answered, runId: Int64?, logger: Logger, on connection: PostgresConnection
    ) throws -> Stored {
        let orders = answered.orders
        guard !orders.isEmpty else { return Stored() }
        return try connection.transactionRetryingConflicts { connection in
            try refunds.serializeGoogleRefunds(on: connection)
            let parts = try self.parts(of: orders.map(\.orderId), on: connection)
            try saveOrders(answered, on: connection)
            var stored = Stored()
            var priced: [(GoogleOrderPricing.PartPrice, PlayOrder)] = []
            var unrevoked: [RefundRecord] = []
            var overRefunds: [QuarantinedRow] = []
            for order in orders {
                var result = GoogleOrderPricing.price(
                    order, voided: parts.revoked[order.orderId] ?? [], payload: Data())
                if !result.unrevoked.isEmpty {
                    let payload = try JSONEncoder.sorted.encode(order)
                    for index in result.unrevoked.indices { result.unrevoked[index].payload = payload }
                }
                priced += result.parts.map { ($0, order) }
                unrevoked += result.unrevoked
                if let reason = result.overRefund {
                    overRefunds.append(
                        QuarantinedRow(
                            job: .googleOrders, naturalKey: order.orderId, raw: try JSONEncoder.sorted.encode(order),
                            reason: reason))
                }
            }
            stored.priced = priced.filter { $0.0.gross != nil }.count
            stored.pending = priced.filter { $0.0.note == .pending }.count
            stored.overRefunded = overRefunds.count
            try refunds.savePartAmounts(priced, on: connection)
            try refunds.replaceUnrevoked(unrevoked, stored: parts.unrevoked, runId: runId, on: connection)
            let settled = Set(overRefunds.compactMap(\.naturalKey))
            // An order set aside for refunding more than it charged puts nothing back yet: it is asked again.
            try refunds.restoreRecorded(orders.map(\.orderId).filter { !settled.contains($0) }, on: connection)
            try Quarantine.record(overRefunds, app: appId, runId: runId, logger: logger, counters: nil, on: connection)
            try Quarantine.resolveLanded(
                job: .googleOrders, app: appId, keys: orders.map(\.orderId).filter { !settled.contains($0) },
                note: "the order's figures add up now", on: connection)
            return stored
        }
    }

    /// Prices a stored order again from what Google said of it (`quarantine retry` of an order set aside, after a
    /// fix). Returns whether its figures add up now; `false` when it was never fetched.
    public func reprice(orderId: String, logger: Logger, on connection: PostgresConnection) throws -> Bool {
        let rows = try connection.query(
            "SELECT payload::text AS p FROM google_order WHERE app_id = $1 AND order_id = $2 AND status = 'ok'",
            [appId, orderId])
        guard let text: String = try rows.first?.decodeIfPresent("p") else { return false }
        let order = try JSONDecoder().decode(PlayOrder.self, from: Data(text.utf8))
        let stored = try store([order], payloads: [text], runId: nil, logger: logger, on: connection)
        return stored.overRefunded == 0
    }

    /// What the ledger holds of some orders' refunds: the revoked rows by order id (what the voided list said,
    /// typed), and the rows of refunds without revocation (their row id by order id and part key).
    struct LedgerParts {
        var revoked: [String: [GoogleOrderPricing.VoidedPart]] = [:]
        var unrevoked: [String: [String: Int64]] = [:]
    }

    /// The refund rows of these orders (``LedgerParts``), in one probe by key per order.
    func parts(of orderIds: [String], on connection: PostgresConnection) throws -> LedgerParts {
        let rows = try connection.query(
            """
            SELECT r.id, r.order_id, r.part_key, r.revoked, r.refund_type, r.quantity,
                   (extract(epoch FROM r.refunded_at) * 1000)::bigint AS voided_millis
            FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
            CROSS JOIN LATERAL (
                -- Each order by its key. OFFSET 0 keeps the planner from flattening the per-id lookups into a join,
                -- which, with the statistics of a table a backlog is still filling, reads every row of the app.
                SELECT id, order_id, part_key, revoked, refund_type, quantity, refunded_at FROM refund
                WHERE app_id = $1 AND order_id = i.id AND platform = 'google'
                OFFSET 0
            ) r
            ORDER BY r.order_id, r.id
            """, [appId, PostgresTextArray(orderIds)])
        var parts = LedgerParts()
        for row in rows {
            let (id, orderId): (Int64, String) = (try row.decode("id"), try row.decode("order_id"))
            guard try row.decode("revoked") as Bool else {
                parts.unrevoked[orderId, default: [:]][try row.decode("part_key")] = id
                continue
            }
            let kind = RefundKind(rawValue: try row.decode("refund_type"))
            let units: Int = try row.decode("quantity")
            parts.revoked[orderId, default: []].append(
                GoogleOrderPricing.VoidedPart(
                    rowId: id, units: kind == .partialQuantity ? units : nil,
                    voidedMillis: try row.decode("voided_millis")))
        }
        return parts
    }
}
