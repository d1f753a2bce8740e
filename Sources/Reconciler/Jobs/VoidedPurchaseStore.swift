import Foundation
import Logging
import PlayDeveloperAPI
import Postgres

/// Writes pages of Google voided purchases into the refund ledger (one statement per page) and applies their
/// effect on subscriptions.
///
/// Natural key: `(app, orderId, part_key)`. With `includeQuantityBasedPartialRefund` a purchase refunded in parts
/// yields one row per part, each with `voidedQuantity`; whether parts share an `orderId` is undocumented, so each
/// part is keyed `"<voidedTimeMillis>:<voidedQuantity>"` and none overwrites another. A row without `orderId` has
/// no key and is quarantined (see ``intake(_:)``).
struct VoidedPurchaseStore {
    let app: AppConfig
    let products: [String: ProductConfig]

    /// The page's rows as arrays, one per column, for `unnest`.
    struct Columns {
        var orderIds: [String] = []
        var partKeys: [String] = []
        var tokens: [String] = []
        var purchaseMillis: [String?] = []
        var voidedMillis: [String] = []
        var reasonCodes: [String?] = []
        var reasonLabels: [String] = []
        var sourceCodes: [String?] = []
        var quantities: [String] = []
        /// The rows' JSON objects as one JSON array: one `jsonb` document per page costs the server a fraction of
        /// a `jsonb[]` of a thousand documents.
        var payloads = PostgresJSON(text: "")
    }

    static func columns(_ rows: [VoidedPurchase]) -> Columns {
        var columns = Columns()
        var payloads = Data()
        payloads.reserveCapacity(rows.reduce(2) { $0 + $1.rawJSON.count + 1 })
        payloads.append(UInt8(ascii: "["))
        for row in rows {
            columns.orderIds.append(row.orderId ?? "")
            columns.partKeys.append(partKey(row))
            columns.tokens.append(row.purchaseToken)
            columns.purchaseMillis.append(row.purchaseTimeMillis.map(String.init))
            columns.voidedMillis.append(String(row.voidedTimeMillis))
            columns.reasonCodes.append(row.voidedReason?.code.map(String.init))
            columns.reasonLabels.append(row.voidedReason?.label ?? "unknown")
            columns.sourceCodes.append(row.voidedSource?.code.map(String.init))
            columns.quantities.append(String(row.voidedQuantity ?? 1))
            if payloads.count > 1 { payloads.append(UInt8(ascii: ",")) }
            payloads.append(row.rawJSON)
        }
        payloads.append(UInt8(ascii: "]"))
        columns.payloads = PostgresJSON(data: payloads)
        return columns
    }

    /// The part of an order a row refunds: `""` for the whole order, `"<voidedTimeMillis>:<voidedQuantity>"` for a
    /// quantity-based part.
    static func partKey(_ row: VoidedPurchase) -> String {
        row.voidedQuantity.map { "\(row.voidedTimeMillis):\($0)" } ?? ""
    }

    /// Stores a page's rows and sets its odd ones aside, inside the caller's transaction (with the checkpoint):
    /// when the database refuses the page for its rows' sake, the rows are written one by one so exactly the refused
    /// ones are quarantined. Returns (inserted, updated).
    func write(
        _ rows: [VoidedPurchase], quarantined: [QuarantinedRow], runId: Int64?, expectNew: Bool, logger: Logger,
        counters: JobCounters, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        let (counts, refused) = try Quarantine.writeRowByRowOnRefusal(rows, on: connection) { batch in
            try upsert(batch, runId: runId, expectNew: expectNew && batch.count == rows.count, on: connection)
        }
        let odd =
            quarantined
            + refused.map { row, error in
                QuarantinedRow(
                    job: .googleVoided, naturalKey: row.orderId, raw: Self.rawJSON(of: row), refusal: error)
            }
        try Quarantine.record(odd, app: app.id, runId: runId, logger: logger, counters: counters, on: connection)
        return counts
    }

    /// Upserts a page. Returns (inserted, updated).
    /// - Parameter expectNew: the rows are probably all new (the previous page was): try a plain `INSERT` first,
    ///   which spares the server the conflict check of every row, and fall back to the upsert when a row exists.
    func upsert(
        _ rows: [VoidedPurchase], runId: Int64?, expectNew: Bool = false, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        guard !rows.isEmpty else { return (0, 0) }
        let columns = Self.columns(rows)
        let productIds = products.keys.sorted()
        let parameters: [any PostgresEncodable] = [
            app.id, PostgresTextArray(columns.orderIds), PostgresTextArray(columns.partKeys),
            PostgresTextArray(columns.tokens), PostgresNullableTextArray(columns.purchaseMillis),
            PostgresTextArray(columns.voidedMillis), PostgresNullableTextArray(columns.reasonCodes),
            PostgresTextArray(columns.reasonLabels), PostgresNullableTextArray(columns.sourceCodes),
            PostgresTextArray(columns.quantities), columns.payloads, runId,
            PostgresTextArray(productIds),
            PostgresNullableTextArray(productIds.map { products[$0]?.priceMilli.map(String.init) }),
            PostgresNullableTextArray(productIds.map { products[$0]?.currency }),
        ]
        var counts: PostgresRow?
        if expectNew {
            try connection.execute("SAVEPOINT voided_page")
            do {
                counts = try connection.query(Self.insertSQL, parameters)[0]
            } catch let error as PostgresError where error.sqlState == "23505" {
                try connection.execute("ROLLBACK TO SAVEPOINT voided_page")
            }
        }
        let row = try counts ?? connection.query(Self.upsertSQL, parameters)[0]
        try applyToSubscriptions(columns, runId: runId, on: connection)
        return (try row.decode("inserted"), try row.decode("updated"))
    }

    /// How many rows of a page are not yet in the ledger (for `--dry-run`).
    func countNew(_ rows: [VoidedPurchase], on connection: PostgresConnection) throws -> Int {
        guard !rows.isEmpty else { return 0 }
        let columns = Self.columns(rows)
        let row = try connection.query(
            """
            SELECT count(*) AS n FROM unnest($2::text[], $3::text[]) AS i(order_id, part_key)
            WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = i.order_id
                              AND r.part_key = i.part_key)
            """, [app.id, PostgresTextArray(columns.orderIds), PostgresTextArray(columns.partKeys)])[0]
        return try row.decode("n")
    }

    // $1 app, $2..$10 the page's columns, $11 its rows' JSON as one array (in the same order), $12 run id,
    // $13..$15 configured product prices.
    // The product (and so the price) comes from the subscription the purchase token belongs to, when it is known.
    static let upsertSQL = insertSQL(
        onConflict: """
            ON CONFLICT (app_id, order_id, part_key) DO UPDATE SET
                payload = EXCLUDED.payload, reason_code = EXCLUDED.reason_code,
                reason_label = EXCLUDED.reason_label, source_code = EXCLUDED.source_code,
                subscription_id = coalesce(r.subscription_id, EXCLUDED.subscription_id),
                product_id = coalesce(r.product_id, EXCLUDED.product_id),
                price_milli = coalesce(r.price_milli, EXCLUDED.price_milli),
                amount_milli = coalesce(r.amount_milli, EXCLUDED.amount_milli),
                currency = coalesce(r.currency, EXCLUDED.currency),
                gross_amount = coalesce(r.gross_amount, EXCLUDED.gross_amount),
                amount_precision = coalesce(r.amount_precision, EXCLUDED.amount_precision),
                amount_source = coalesce(r.amount_source, EXCLUDED.amount_source),
                last_seen_run = EXCLUDED.last_seen_run
            WHERE r.payload IS DISTINCT FROM EXCLUDED.payload
               OR (r.subscription_id IS NULL AND EXCLUDED.subscription_id IS NOT NULL)
            """)
    static let insertSQL = insertSQL(onConflict: "")

    private static func insertSQL(onConflict: String) -> String {
        """
        WITH incoming AS (
            SELECT * FROM ROWS FROM (
                    unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::int[], $8::text[],
                           $9::int[], $10::int[]),
                    jsonb_array_elements($11::jsonb))
                AS t(order_id, part_key, purchase_token, purchase_ms, voided_ms, reason_code, reason_label,
                     source_code, quantity, payload)
        ), priced AS (
            SELECT i.*, s.id AS subscription_id, s.product_id, p.price_milli, p.currency
            FROM incoming i
            LEFT JOIN subscription s ON s.app_id = $1 AND s.store_id = i.purchase_token
            LEFT JOIN unnest($13::text[], $14::bigint[], $15::text[]) AS p(product_id, price_milli, currency)
                ON p.product_id = s.product_id
        ), merged AS (
            INSERT INTO refund AS r (app_id, platform, order_id, part_key, original_id, subscription_id, product_id,
                                     purchased_at, refunded_at, recorded_at, reason_code, reason_label, source_code,
                                     refund_type, quantity, price_milli, amount_milli, currency, first_seen_run,
                                     last_seen_run, payload, gross_amount, amount_precision, amount_source)
            SELECT $1, 'google', order_id, part_key, purchase_token, subscription_id, product_id,
                   to_timestamp(purchase_ms / 1000.0), to_timestamp(voided_ms / 1000.0), now(), reason_code,
                   reason_label, source_code,
                   CASE WHEN part_key = '' THEN 'full' ELSE 'partial_quantity' END,
                   quantity, price_milli, price_milli * quantity, currency, $12, $12, payload,
                   -- An estimate from configured prices until the Orders API says what was refunded.
                   price_milli * quantity, CASE WHEN price_milli IS NOT NULL THEN 3 END,
                   CASE WHEN price_milli IS NOT NULL THEN 'configured' END
            FROM priced
        \(onConflict)
            RETURNING (xmax = 0) AS inserted
        )
        SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
        FROM merged
        """
    }

    /// A voided current order ends the subscription's entitlement; an older one flags it for a recheck.
    private func applyToSubscriptions(_ columns: Columns, runId: Int64?, on connection: PostgresConnection) throws {
        try RefundEffects.apply(
            app: app.id, storeIds: columns.tokens, orderIds: columns.orderIds, source: "google_voided", runId: runId,
            on: connection)
    }
}
