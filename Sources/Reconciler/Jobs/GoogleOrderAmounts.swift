import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// What Google refunded, from the Orders API: once a voided page is stored, the orders of its rows queue up and are
/// read with `orders.batchget` (distinct ids, 1000 a call, a few calls at once, while the paging goes on: see
/// `GoogleOrderAmounts+Pricing.swift`), and each refund row gets its amount, tax, currency, buyer country, quantity
/// and product from the order.
///
/// - A whole-call 404 (one id unknown or of another package) is split in halves and retried until the unknown id
///   is alone; it is recorded `not_found` and the others land. One bad id among 1000 costs about 20 calls.
/// - 403 (no "View financial data" permission): recorded `no_permission`, no more order calls this run; amounts
///   stay estimated (configured prices) or unknown.
/// - The quota gate's daily budget (`limits.<app>.developerApiPerDay`) or the store's throttling stops the fetching
///   for this run; what was not fetched is asked on the next run (``backlog(limit:since:in:)``).
/// - A refund still pending at Google (a partial refund `PENDING`, the order `PENDING_REFUND`) is stored with note
///   `pending` and asked again on later runs until settled.
///
/// Matching: a whole-order row takes `orderHistory.refundEvent.refundDetails` and the line item's quantity less the
/// parts already refunded; a quantity-based part (`part_key` `"<voidedTimeMillis>:<voidedQuantity>"`) takes the
/// `partialRefundEvents` entry created at its void time, or else the next unmatched one in time order.
public struct GoogleOrderAmounts: Sendable {
    /// What a call of ``fetch(orderIds:purpose:in:)`` did.
    public struct Summary: Sendable, Equatable {
        /// `orders.batchget` calls made.
        public var calls = 0
        /// Orders read.
        public var orders = 0
        /// Order ids Google does not know (or of another package).
        public var notFound = 0
        /// Refund rows that got a store amount.
        public var priced = 0
        /// Refunds still pending at Google.
        public var pending = 0
        /// Fetching stopped for this run (quota, permission, outage); the rest waits for the next run.
        public var stopped = false

        mutating func add(_ other: Summary) {
            calls += other.calls
            orders += other.orders
            notFound += other.notFound
            priced += other.priced
            pending += other.pending
            stopped = stopped || other.stopped
        }
    }

    let app: AppConfig
    let client: PlayDeveloperClient

    /// Creates the fetcher for one Google app.
    public init(app: AppConfig, client: PlayDeveloperClient) {
        self.app = app
        self.client = client
    }

    /// Order ids of stored refund rows that still need the store's amount: never asked, or pending at Google.
    /// Ids of rows without an `orderId` (keyed by purchase token) are never asked.
    func needing(_ orderIds: [String], on connection: PostgresConnection) throws -> [String] {
        guard !orderIds.isEmpty else { return [] }
        return try connection.query(
            """
            SELECT DISTINCT r.order_id FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
            CROSS JOIN LATERAL (
                -- By key, per id (see store(_:body:on:) for why OFFSET 0).
                SELECT order_id, amount_source, recorded_at FROM refund
                WHERE app_id = $1 AND order_id = i.id AND platform = 'google' AND revoked
                OFFSET 0
            ) r
            LEFT JOIN LATERAL (
                SELECT order_id, status, refund_pending, fetched_at FROM google_order
                WHERE app_id = $1 AND order_id = r.order_id
                OFFSET 0
            ) o ON true
            WHERE (o.order_id IS NULL OR (o.status = 'ok' AND o.refund_pending)
                   OR (o.status = 'ok' AND r.amount_source IS DISTINCT FROM 'store' AND o.fetched_at < r.recorded_at))
            ORDER BY 1
            """, [app.id, PostgresTextArray(orderIds)]
        ).map { try $0.decode("order_id") }
    }

    /// Order ids waiting for an amount from earlier runs (not fetched, or pending), oldest refund first.
    /// With `fetchedBefore`, orders fetched since then (in the same run: still pending at Google) are left out.
    public func backlog(
        limit: Int, since: Date? = nil, fetchedBefore: Date? = nil, on connection: PostgresConnection
    ) throws -> [String] {
        try connection.query(
            """
            SELECT r.order_id FROM refund r
            LEFT JOIN google_order o ON o.app_id = r.app_id AND o.order_id = r.order_id
            WHERE r.app_id = $1 AND r.platform = 'google' AND r.revoked
              AND ($3::timestamptz IS NULL OR r.refunded_at >= $3)
              AND (o.order_id IS NULL OR (o.status = 'ok' AND o.refund_pending)
                   OR (o.status = 'ok' AND r.amount_source IS DISTINCT FROM 'store' AND o.fetched_at < r.recorded_at)
                   OR (o.status = 'no_permission' AND o.fetched_at < now() - interval '1 day'))
              AND ($4::timestamptz IS NULL OR o.order_id IS NULL OR o.fetched_at < $4)
            GROUP BY r.order_id
            ORDER BY min(r.refunded_at), r.order_id
            LIMIT $2
            """, [app.id, limit, since.map(PostgresTimestamp.format), fetchedBefore.map(PostgresTimestamp.format)]
        ).map { try $0.decode("order_id") }
    }

    /// The job name of `storerecon backfill google-orders` (its lock and run records).
    public static let backfillJob = "google_orders_backfill"

    /// `storerecon backfill google-orders`: asks for every refund in the ledger still without the store's amount
    /// (refunded since `since`), 1000 orders a call, oldest first, each order once per run, with a progress line.
    /// Resumable: every call's orders commit as they come.
    public func backfill(since: Date?, in environment: JobEnvironment) async throws -> Summary {
        var pricing = Pricing(amounts: self, purpose: .backfill)
        let asked = try await priceBacklog(since: since, pricing: &pricing, in: environment)
        environment.progress?.finish()
        let summary = pricing.summary
        environment.logger.info(
            "backfill google-orders: \(asked) orders asked in \(summary.calls) calls; \(summary.priced) refunds priced by the store, \(summary.pending) pending, \(summary.notFound) orders not found"
        )
        return summary
    }

    /// Asks for the whole backlog (``backlog(limit:since:fetchedBefore:on:)``) in rounds, each order once, until it is empty or
    /// the asking stopped; returns how many orders were asked. A run that stored pages and was killed before their
    /// orders were asked leaves them all here, so the next run prices them all, not a share.
    func priceBacklog(
        since: Date?, fetchedBefore: Date? = nil, pricing: inout Pricing, in environment: JobEnvironment
    ) async throws -> Int {
        var asked = Set<String>()
        while !pricing.summary.stopped {
            try environment.checkShutdown()
            let ids = try backlog(
                limit: Self.backfillRound + asked.count, since: since, fetchedBefore: fetchedBefore,
                on: environment.connection
            ).filter { !asked.contains($0) }
            guard !ids.isEmpty else { break }
            let round = Array(ids.prefix(Self.backfillRound))
            asked.formUnion(round)
            pricing.queue(round)
            try await drain(&pricing, in: environment)
            let summary = pricing.summary
            environment.progress?.update(
                "google-orders \(app.id): \(asked.count) orders asked, \(summary.calls) calls, \(summary.priced) refunds priced, \(summary.pending) pending, \(summary.notFound) not found"
            )
        }
        return asked.count
    }

    /// Orders a backfill round asks for (calls of 1000, ``Pricing/maxInFlight`` at once).
    static let backfillRound = Pricing.maxInFlight * PlayDeveloperClient.maxOrderIds

    /// Fetches and stores the orders of these ids that need it (see ``needing(_:on:)``), 1000 a call, a few calls
    /// at once. Never throws for a store answer: the voided page it follows is already stored, and what is not
    /// fetched now is asked on a later run. Throws only for the database (and a stop request).
    public func fetch(orderIds: [String], purpose: CallPurpose, in environment: JobEnvironment) async throws
        -> Summary
    {
        var pricing = Pricing(amounts: self, purpose: purpose)
        try pricing.addRefunds(orderIds, on: environment.connection)
        try await drain(&pricing, in: environment)
        return pricing.summary
    }

    /// Records ids Google would not give (404 alone, or 403); refund rows note why they have no store amount.
    func mark(_ ids: [String], status: String, on connection: PostgresConnection) throws {
        try connection.transactionRetryingConflicts { connection in
            try connection.execute(
                """
                INSERT INTO google_order (app_id, order_id, status)
                SELECT $1, id, $3 FROM unnest($2::text[]) AS i(id)
                ON CONFLICT (app_id, order_id) DO UPDATE SET status = EXCLUDED.status, fetched_at = now(),
                    fetch_count = google_order.fetch_count + 1
                """, [app.id, PostgresTextArray(ids), status])
            try connection.execute(
                """
                UPDATE refund SET amount_note = $3
                WHERE app_id = $1 AND platform = 'google' AND order_id = ANY ($2::text[])
                  AND amount_source IS DISTINCT FROM 'store'
                """, [app.id, PostgresTextArray(ids), status == "not_found" ? "order_not_found" : status])
        }
    }

    /// One refund row's amount as the order states it.
    struct Priced {
        var orderId: String
        var partKey: String
        var gross: Int64?
        var tax: Int64?
        var currency: String?
        var quantity: Int
        var note: String?
    }

    /// Each order as JSON (sorted keys), for `google_order.payload`.
    static func payloads(_ orders: [PlayOrder]) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try orders.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
    }

    /// Stores orders and the amounts of their refund rows, in one transaction. `body` is the answer they were
    /// decoded from: each order's payload is its element of the body's `orders` array as Google sent it, split by
    /// the server (no encoding again here, which cost as much as the decoding). An order the answer repeats is
    /// stored once.
    func store(_ answered: [PlayOrder], body: String, on connection: PostgresConnection) throws
        -> (priced: Int, pending: Int)
    {
        // Positions (1-based, as WITH ORDINALITY counts) of each order's first appearance.
        var seen = Set<String>()
        var positions: [Int] = []
        var orders: [PlayOrder] = []
        for (index, order) in answered.enumerated() where seen.insert(order.orderId).inserted {
            positions.append(index + 1)
            orders.append(order)
        }
        guard !orders.isEmpty else { return (0, 0) }
        return try connection.transactionRetryingConflicts { connection in
            let ids = orders.map(\.orderId)
            let ledger = try connection.query(
                """
                SELECT r.order_id, r.part_key FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
                CROSS JOIN LATERAL (
                    -- Each order by its key. OFFSET 0 (and the LIMIT 1 below) keep the planner from flattening the
                    -- per-id lookups into a join: with the statistics of a table a backlog is still filling, it then
                    -- read every row of the app for each page (measured: 60 ms a page at 236,000 rows and growing,
                    -- 11.8 s for the update below, against milliseconds by key).
                    SELECT order_id, part_key FROM refund
                    WHERE app_id = $1 AND order_id = i.id AND platform = 'google' AND revoked
                    OFFSET 0
                ) r
                ORDER BY 1, 2
                """, [app.id, PostgresTextArray(ids)])
            var parts: [String: [String]] = [:]
            for row in ledger {
                parts[try row.decode("order_id"), default: []].append(try row.decode("part_key"))
            }
            var priced: [Priced] = []
            for order in orders {
                priced += Self.price(order, partKeys: parts[order.orderId] ?? [])
            }
            try connection.execute(
                """
                INSERT INTO google_order (app_id, order_id, status, state, currency, total_nanos, tax_nanos,
                                          revenue_nanos, buyer_country, product_id, quantity, refund_pending, payload)
                SELECT $1, t.order_id, t.status, t.state, t.currency, t.total, t.tax, t.revenue, t.country, t.product,
                       t.quantity, t.pending, p.e
                FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[],
                            $9::text[], $10::text[], $11::int[], $12::boolean[], $13::bigint[])
                    AS t(order_id, status, state, currency, total, tax, revenue, country, product, quantity, pending, n)
                JOIN jsonb_array_elements($14::jsonb -> 'orders') WITH ORDINALITY AS p(e, n) ON p.n = t.n
                ON CONFLICT (app_id, order_id) DO UPDATE SET
                    status = EXCLUDED.status, state = EXCLUDED.state, currency = EXCLUDED.currency,
                    total_nanos = EXCLUDED.total_nanos, tax_nanos = EXCLUDED.tax_nanos,
                    revenue_nanos = EXCLUDED.revenue_nanos, buyer_country = EXCLUDED.buyer_country,
                    product_id = EXCLUDED.product_id, quantity = EXCLUDED.quantity,
                    refund_pending = EXCLUDED.refund_pending, payload = EXCLUDED.payload, fetched_at = now(),
                    fetch_count = google_order.fetch_count + 1
                """,
                [
                    app.id, PostgresTextArray(ids), PostgresTextArray(orders.map { _ in "ok" }),
                    PostgresNullableTextArray(orders.map(\.state)),
                    PostgresNullableTextArray(orders.map { $0.total?.currencyCode }),
                    PostgresArray(orders.map { $0.total?.totalNanos }),
                    PostgresArray(orders.map { $0.tax?.totalNanos }),
                    PostgresArray(orders.map { $0.developerRevenueInBuyerCurrency?.totalNanos }),
                    PostgresNullableTextArray(orders.map { $0.buyerAddress?.buyerCountry }),
                    PostgresNullableTextArray(orders.map { $0.lineItems?.first?.productId }),
                    PostgresArray(orders.map { Self.quantity($0) }),
                    PostgresArray(orders.map(\.refundPending)),
                    PostgresArray(positions), body,
                ])
            let byId = Dictionary(orders.map { ($0.orderId, $0) }) { first, _ in first }
            let updated = try connection.query(
                """
                WITH priced AS (
                    SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::int[],
                                         $8::text[], $9::text[], $10::text[], $11::text[])
                        AS t(order_id, part_key, gross, tax, currency, quantity, note, country, product, reason)
                ), targets AS (
                    -- Each row by its key (unique, hence LIMIT 1), one index lookup per priced row.
                    SELECT x.id, p.* FROM priced p
                    CROSS JOIN LATERAL (
                        SELECT id, amount_source FROM refund x
                        WHERE x.app_id = $1 AND x.order_id = p.order_id AND x.part_key = p.part_key
                          AND x.platform = 'google' AND x.revoked
                        LIMIT 1
                    ) x
                    WHERE p.gross IS NOT NULL OR x.amount_source IS DISTINCT FROM 'store'
                ), changed AS (
                    UPDATE refund r SET gross_amount = p.gross, tax_amount = p.tax,
                        amount_precision = CASE WHEN p.gross IS NOT NULL THEN 9 ELSE r.amount_precision END,
                        amount_source = CASE WHEN p.gross IS NOT NULL THEN 'store' ELSE r.amount_source END,
                        currency = coalesce(p.currency, r.currency), quantity = p.quantity, amount_note = p.note,
                        buyer_country = p.country, product_id = coalesce(r.product_id, p.product),
                        refund_reason = p.reason
                    FROM targets p
                    WHERE r.id = p.id
                    RETURNING p.gross IS NOT NULL AS priced, p.note = 'pending' AS pending
                )
                SELECT count(*) FILTER (WHERE priced) AS priced, count(*) FILTER (WHERE pending) AS pending
                FROM changed
                """,
                [
                    app.id, PostgresTextArray(priced.map(\.orderId)), PostgresTextArray(priced.map(\.partKey)),
                    PostgresArray(priced.map(\.gross)),
                    PostgresArray(priced.map(\.tax)),
                    PostgresNullableTextArray(priced.map(\.currency)),
                    PostgresArray(priced.map(\.quantity)),
                    PostgresNullableTextArray(priced.map(\.note)),
                    PostgresNullableTextArray(priced.map { byId[$0.orderId]?.buyerAddress?.buyerCountry }),
                    PostgresNullableTextArray(priced.map { byId[$0.orderId]?.lineItems?.first?.productId }),
                    PostgresNullableTextArray(priced.map { byId[$0.orderId]?.orderHistory?.refundEvent?.refundReason }),
                ])[0]
            try recordRefundsWithoutRevocation(
                orders.filter { parts[$0.orderId] == nil }, on: connection)
            return (try updated.decode("priced"), try updated.decode("pending"))
        }
    }

    /// Refunds Google made without revoking, seen in orders the ledger has no refund of: a `refundEvent`, and each
    /// processed partial refund. Stored with `revoked = false` and part keys `orders:refund` /
    /// `orders:partial:<createTimeMillis>`; they take nothing from the subscription. When the voided list later
    /// shows the order, its rows replace these (``dropRefundsSeenInVoidedList(_:on:)``).
    func recordRefundsWithoutRevocation(
        _ orders: [PlayOrder], on connection: PostgresConnection
    ) throws {
        let payloads = try Self.payloads(orders)
        let records = zip(orders, payloads).flatMap { order, payload in
            RefundRecord.refundsWithoutRevocation(order, payload: Data(payload.utf8))
        }
        _ = try RefundLedger(app: app, products: [:]).upsert(records, runId: nil, on: connection)
    }

    /// Drops the rows of refunds without revocation of orders the voided list now shows (same money, now revoked).
    func dropRefundsSeenInVoidedList(_ orderIds: [String], on connection: PostgresConnection) throws {
        guard !orderIds.isEmpty else { return }
        try connection.transactionRetryingConflicts { connection in
            try connection.execute(
                """
                DELETE FROM refund r
                USING (
                    -- By key, per id (see store(_:body:on:) for why OFFSET 0).
                    SELECT x.id FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS u(id)) i
                    CROSS JOIN LATERAL (
                        SELECT id FROM refund
                        WHERE app_id = $1 AND order_id = i.id AND platform = 'google' AND NOT revoked
                          AND EXISTS (SELECT 1 FROM refund v WHERE v.app_id = $1 AND v.order_id = i.id AND v.revoked)
                        OFFSET 0
                    ) x
                ) gone
                WHERE r.id = gone.id
                """, [app.id, PostgresTextArray(orderIds)])
        }
    }

    /// Orders storerecon knows that may have been refunded without revocation: Google subscriptions' current
    /// orders (`latestSuccessfulOrderId`, kept by the recheck) and orders fetched before, none refunded in the
    /// ledger yet nor named by a voided row waiting in the quarantine, least recently asked first.
    public func knownOrders(limit: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            SELECT id FROM (
                SELECT s.current_order_id AS id, NULL::timestamptz AS asked FROM subscription s
                WHERE s.app_id = $1 AND s.current_order_id LIKE 'GPA.%'
                  AND NOT EXISTS (SELECT 1 FROM google_order o WHERE o.app_id = $1 AND o.order_id = s.current_order_id)
                UNION ALL
                SELECT o.order_id, o.fetched_at FROM google_order o
                WHERE o.app_id = $1 AND o.status = 'ok' AND o.state IS DISTINCT FROM 'REFUNDED'
            ) AS known
            WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = known.id)
              -- A voided row set aside (wrong types) is a revocation the ledger could not store yet: its order's
              -- refund is not one "without revocation", and waits for the quarantine's retry.
              AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.app_id = $1 AND q.job = 'google_voided'
                              AND q.resolved_at IS NULL AND q.natural_key = known.id)
            GROUP BY id
            ORDER BY min(asked) NULLS FIRST, id
            LIMIT $2
            """, [app.id, limit]
        ).map { try $0.decode("id") }
    }

    /// Re-reads up to `limit` known orders (``knownOrders(limit:on:)``) and records refunds Google made without
    /// revoking them. Within the same quota as every Orders call.
    public func recheckKnownOrders(limit: Int, purpose: CallPurpose, in environment: JobEnvironment) async throws
        -> Summary
    {
        var pricing = Pricing(amounts: self, purpose: purpose)
        pricing.queue(try knownOrders(limit: limit, on: environment.connection))
        try await drain(&pricing, in: environment)
        return pricing.summary
    }

    /// Units the order bought: the first line item's quantity (1 for a subscription).
    static func quantity(_ order: PlayOrder) -> Int? {
        guard let item = order.lineItems?.first else { return nil }
        return item.oneTimePurchaseDetails?.quantity ?? 1
    }

    /// The amounts of an order's refund rows (`partKeys`: the ledger's rows of it).
    static func price(_ order: PlayOrder, partKeys: [String]) -> [Priced] {
        let events = (order.orderHistory?.partialRefundEvents ?? []).enumerated()
            .map { index, event in
                (index, RFC3339Timestamp(event.createTime ?? "")?.millisecondsSinceEpoch, event)
            }
            .sorted { ($0.1 ?? .max, $0.0) < ($1.1 ?? .max, $1.0) }
        // Parts: "<voidedTimeMillis>:<voidedQuantity>", in time order.
        let partRows = partKeys.compactMap { key -> (key: String, millis: Int64, units: Int)? in
            let fields = key.split(separator: ":")
            guard fields.count == 2, let millis = Int64(fields[0]), let units = Int(fields[1]) else { return nil }
            return (key, millis, units)
        }.sorted { ($0.millis, $0.key) < ($1.millis, $1.key) }
        var used = Set<Int>()
        var matched: [String: PlayOrder.PartialRefundEvent] = [:]
        for part in partRows {
            if let exact = events.first(where: { !used.contains($0.0) && $0.1 == part.millis }) {
                used.insert(exact.0)
                matched[part.key] = exact.2
            }
        }
        for part in partRows where matched[part.key] == nil {
            if let next = events.first(where: { !used.contains($0.0) }) {
                used.insert(next.0)
                matched[part.key] = next.2
            }
        }
        let bought = quantity(order) ?? 1
        let partUnits = partRows.reduce(0) { $0 + $1.units }
        var result: [Priced] = []
        for part in partRows {
            let event = matched[part.key]
            let pending = event?.state == "PENDING"
            result.append(
                Priced(
                    orderId: order.orderId, partKey: part.key, gross: event?.refundDetails?.total?.totalNanos,
                    tax: event?.refundDetails?.tax?.totalNanos ?? (event == nil ? nil : 0),
                    currency: event?.refundDetails?.total?.currencyCode ?? order.total?.currencyCode,
                    quantity: part.units, note: event == nil ? "no_refund_event" : pending ? "pending" : nil))
        }
        if partKeys.contains("") {
            let refund = order.orderHistory?.refundEvent
            let total = refund?.refundDetails?.total?.totalNanos
            // Units refunded: the refund's total over the line's price of one unit (tax included) when it divides
            // exactly; else what the parts in the ledger left (a part may lie outside what was read).
            var units = max(1, bought - partUnits)
            if let total, let line = order.lineItems?.first?.total?.totalNanos, bought > 0, line > 0,
                line % Int64(bought) == 0
            {
                let unit = line / Int64(bought)
                if total > 0, total % unit == 0, total / unit <= Int64(bought) { units = Int(total / unit) }
            }
            result.append(
                Priced(
                    orderId: order.orderId, partKey: "", gross: total,
                    tax: total == nil ? nil : refund?.refundDetails?.tax?.totalNanos ?? 0,
                    currency: refund?.refundDetails?.total?.currencyCode ?? order.total?.currencyCode,
                    quantity: units,
                    note: refund == nil ? (order.state == "PENDING_REFUND" ? "pending" : "no_refund_event") : nil))
        }
        return result
    }
}
