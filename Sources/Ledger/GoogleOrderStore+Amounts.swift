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

    /// Stores orders and the amounts of their refunds. `body` is the answer they were decoded from: each order's
    /// payload is its element of the body's `orders` array as Google sent it. An order the answer repeats is stored
    /// once. Must not run inside another transaction.
    public func store(
        _ answered: [PlayOrder], body: String, runId: Int64?, logger: Logger, on connection: PostgresConnection
    ) throws -> Stored {
        var seen = Set<String>()
        var positions: [Int] = []
        var orders: [PlayOrder] = []
        for (index, order) in answered.enumerated() where seen.insert(order.orderId).inserted {
            positions.append(index + 1)  // 1-based, as WITH ORDINALITY counts
            orders.append(order)
        }
        guard !orders.isEmpty else { return Stored() }
        return try connection.transactionRetryingConflicts { connection in
            let parts = try self.parts(of: orders.map(\.orderId), on: connection)
            try saveOrders(orders, positions: positions, body: body, on: connection)
            var stored = Stored()
            var priced: [(GoogleOrderPricing.PartPrice, PlayOrder)] = []
            var unrevoked: [RefundRecord] = []
            var overRefunds: [QuarantinedRow] = []
            for order in orders {
                var result = GoogleOrderPricing.price(order, voided: parts[order.orderId] ?? [], payload: Data())
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
            try savePartAmounts(priced, on: connection)
            try replaceUnrevoked(unrevoked, of: orders.map(\.orderId), runId: runId, on: connection)
            try Quarantine.record(overRefunds, app: appId, runId: runId, logger: logger, counters: nil, on: connection)
            let settled = Set(overRefunds.compactMap(\.naturalKey))
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
        let stored = try store([order], body: #"{"orders":[\#(text)]}"#, runId: nil, logger: logger, on: connection)
        return stored.overRefunded == 0
    }

    /// The revoked refund rows of these orders, by order id: what the voided list said, typed.
    func parts(of orderIds: [String], on connection: PostgresConnection) throws
        -> [String: [GoogleOrderPricing.VoidedPart]]
    {
        let rows = try connection.query(
            """
            SELECT r.id, r.order_id, r.refund_type, r.quantity,
                   (extract(epoch FROM r.refunded_at) * 1000)::bigint AS voided_millis
            FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
            CROSS JOIN LATERAL (
                -- Each order by its key. OFFSET 0 keeps the planner from flattening the per-id lookups into a join,
                -- which, with the statistics of a table a backlog is still filling, reads every row of the app.
                SELECT id, order_id, refund_type, quantity, refunded_at FROM refund
                WHERE app_id = $1 AND order_id = i.id AND platform = 'google' AND revoked
                OFFSET 0
            ) r
            ORDER BY r.order_id, r.id
            """, [appId, PostgresTextArray(orderIds)])
        var parts: [String: [GoogleOrderPricing.VoidedPart]] = [:]
        for row in rows {
            let kind = RefundKind(rawValue: try row.decode("refund_type"))
            let units: Int = try row.decode("quantity")
            parts[try row.decode("order_id"), default: []].append(
                GoogleOrderPricing.VoidedPart(
                    rowId: try row.decode("id"), units: kind == .partialQuantity ? units : nil,
                    voidedMillis: try row.decode("voided_millis")))
        }
        return parts
    }
}
