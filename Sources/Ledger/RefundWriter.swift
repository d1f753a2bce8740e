import Foundation
import Postgres

/// The one writer of the `refund` table: every statement that inserts, updates or deletes a refund row is here, and
/// each takes its amounts from ``RefundAmountRule``. ``RefundLedger`` owns it; ``GoogleOrderStore`` calls it through
/// the ledger when an order's answer changes refund rows.
struct RefundWriter: Sendable {
    /// The app whose rows are written.
    let appId: String
    /// Configured prices, for the estimates (``ConfiguredPrices/estimates``).
    let prices: ConfiguredPrices

    /// Upserts records, then applies their effect on their subscriptions (``SubscriptionLedger``). Returns
    /// (inserted, updated).
    /// - Parameters:
    ///   - rendered: the parameters of these records, rendered ahead (``RefundLedger/prepare(_:runId:)``).
    ///   - keepingStored: a row already stored is left as it is (a record that knows less than any other source).
    func upsert(
        _ records: [RefundRecord], runId: Int64?, expectNew: Bool = false, rendered: [String?]? = nil,
        keepingStored: Bool = false, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        guard let platform = records.first?.platform else { return (0, 0) }
        precondition(records.allSatisfy { $0.platform == platform }, "one platform per batch")
        if platform == .google { try serializeGoogleRefunds(on: connection) }
        let parameters =
            rendered?.map { $0 as any PostgresEncodable }
            ?? Self.parameters(records, app: appId, platform: platform, runId: runId, prices: prices)
        var counts: PostgresRow?
        if expectNew {
            try connection.execute("SAVEPOINT ledger_batch")
            do {
                counts = try connection.query(Self.insertSQL, parameters)[0]
            } catch let error as PostgresError where error.sqlState == "23505" {
                try connection.execute("ROLLBACK TO SAVEPOINT ledger_batch")
            }
        }
        let row = try counts ?? connection.query(keepingStored ? Self.insertNewSQL : Self.upsertSQL, parameters)[0]
        let revoking = records.allSatisfy(\.revokes) ? records : records.filter(\.revokes)
        try SubscriptionLedger.applyRefunds(
            app: appId, storeIds: revoking.map(\.originalId), orderIds: revoking.map(\.orderId),
            source: platform == .google ? "google_voided" : "apple_refunds", runId: runId, on: connection)
        return (try row.decode("inserted"), try row.decode("updated"))
    }

    /// Waits for the app's other writers of Google refund rows to commit, and keeps them waiting until this
    /// transaction ends: a voided row and an Orders answer about the same order, written at once by two processes,
    /// would each miss the other (the answer recording the refund again without revocation, the voided row then
    /// judged already asked about). Taken before the transaction reads or writes any refund row; a row recorded
    /// after it is dated after the other writer's commit (`recorded_at` is the statement's time, not the
    /// transaction's), so ``settleVoided(_:on:)`` compares it rightly with `google_order.fetched_at`.
    func serializeGoogleRefunds(on connection: PostgresConnection) throws {
        try connection.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('storerecon.google_refunds:' || $1, 0))", [appId])
    }

    /// The statement's parameters: the records' columns as typed arrays (`$3` ... `$25`), their payloads as one
    /// JSON array (`$26`: one `jsonb` document per batch costs the server a fraction of a `jsonb[]` of a thousand),
    /// the run (`$27`) and the configured prices per currency (`$28` ... `$31`).
    static func parameters(
        _ records: [RefundRecord], app: String, platform: RefundPlatform, runId: Int64?, prices: ConfiguredPrices
    ) -> [any PostgresEncodable] {
        func column<Value: PostgresEncodable>(_ value: (RefundRecord) -> Value) -> PostgresArray<Value> {
            PostgresArray(records.map(value))
        }
        var payloads = Data()
        payloads.reserveCapacity(records.reduce(2) { $0 + $1.payload.count + 1 })
        payloads.append(UInt8(ascii: "["))
        for record in records {
            if payloads.count > 1 { payloads.append(UInt8(ascii: ",")) }
            payloads.append(record.payload)
        }
        payloads.append(UInt8(ascii: "]"))
        let stated: (RefundRecord) -> (gross: Int64?, tax: Int64?, precision: Int?, note: String?) = { record in
            switch record.amount {
            case .stated(let gross, let tax, let precision): (gross, tax, precision, nil)
            case .none(let note): (nil, nil, nil, note?.rawValue)
            case .estimated: (nil, nil, nil, nil)
            }
        }
        return [
            app, platform.rawValue, column { $0.orderId }, column { $0.part.key }, column { $0.originalId },
            column { $0.productId },
            column { $0.purchasedAt }, column { $0.refundedAt }, column { $0.reasonCode }, column { $0.reasonLabel },
            column { $0.sourceCode }, column { $0.kind.rawValue }, column { $0.quantity },
            column { $0.percentageMilli },
            column { $0.priceMilli }, column { stated($0).gross }, column { stated($0).tax },
            column { stated($0).precision }, column { $0.amount == .estimated }, column { stated($0).note },
            column { $0.currency }, column { $0.environment }, column { $0.buyerCountry }, column { $0.refundReason },
            column { $0.part.revoked }, PostgresJSON(data: payloads), runId,
        ] + prices.parameters
    }

    /// The amount's columns on a conflict, as ``RefundAmountRule`` decides from the stored amount's source and what
    /// the record offers (a Google voided row states no amount: it fills only what the row lacks; one priced ahead
    /// states the store's).
    private static let amountColumns: String = {
        let offer = RefundAmountRule.offerSQL(
            platform: "EXCLUDED.platform", revoked: "EXCLUDED.revoked", source: "EXCLUDED.amount_source")
        let decision = RefundAmountRule.decisionSQL(stored: "r.amount_source", offer: offer)
        return [
            "quantity", "price_milli", "currency", "gross_amount", "tax_amount", "amount_precision", "amount_source",
            "amount_note",
        ].map { name in
            "\(name) = \(RefundAmountRule.columnSQL(decision: decision, stored: "r.\(name)", offered: "EXCLUDED.\(name)"))"
        }.joined(separator: ",\n")
    }()

    static let upsertSQL = insertSQL(
        onConflict: """
            ON CONFLICT (app_id, order_id, part_key) DO UPDATE SET
                refunded_at = EXCLUDED.refunded_at, reason_code = EXCLUDED.reason_code,
                reason_label = EXCLUDED.reason_label, source_code = EXCLUDED.source_code,
                refund_type = EXCLUDED.refund_type, percentage_milli = EXCLUDED.percentage_milli,
                payload = EXCLUDED.payload, environment = coalesce(EXCLUDED.environment, r.environment),
                buyer_country = coalesce(EXCLUDED.buyer_country, r.buyer_country),
                refund_reason = coalesce(EXCLUDED.refund_reason, r.refund_reason),
                subscription_id = coalesce(r.subscription_id, EXCLUDED.subscription_id),
                product_id = coalesce(r.product_id, EXCLUDED.product_id),
                purchased_at = coalesce(r.purchased_at, EXCLUDED.purchased_at),
                reversed_at = coalesce(r.reversed_at, EXCLUDED.reversed_at),
                last_seen_run = EXCLUDED.last_seen_run,
            \(amountColumns)
            WHERE (r.payload - 'signedDate') IS DISTINCT FROM (EXCLUDED.payload - 'signedDate')
               OR (r.refunded_at, r.refund_type, r.reason_code, r.reason_label, r.source_code)
                  IS DISTINCT FROM (EXCLUDED.refunded_at, EXCLUDED.refund_type, EXCLUDED.reason_code,
                                    EXCLUDED.reason_label, EXCLUDED.source_code)
               OR (r.subscription_id IS NULL AND EXCLUDED.subscription_id IS NOT NULL)
               OR (r.buyer_country IS NULL AND EXCLUDED.buyer_country IS NOT NULL)
            """)
    static let insertSQL = insertSQL(onConflict: "")
    static let insertNewSQL = insertSQL(onConflict: "ON CONFLICT (app_id, order_id, part_key) DO NOTHING")

    // $1 app, $2 platform, $3 ... $25 the records' columns, $26 their payloads, $27 run id, $28 ... $31 the configured
    // estimates (``ConfiguredPrices/estimates``).
    // The subscription comes from the purchase token or original transaction id. An estimate is in the sale's
    // currency (``ConfiguredPrices``) until the Orders API says, looked up only for a product with a price (a
    // backlog without prices pays no probe for it); a reversal Apple sent before the refund is applied as it lands.
    private static func insertSQL(onConflict: String) -> String {
        """
        \(resolvedSQL)
        ), merged AS (
            INSERT INTO refund AS r (app_id, platform, order_id, part_key, original_id, subscription_id, product_id,
                                     purchased_at, refunded_at, recorded_at, reason_code, reason_label, source_code,
                                     refund_type, quantity, percentage_milli, price_milli, currency, environment,
                                     first_seen_run, last_seen_run, payload, reversed_at, gross_amount, tax_amount,
                                     amount_precision, amount_source, amount_note, buyer_country, refund_reason,
                                     revoked)
            SELECT $1, $2, order_id, part_key, nullif(original_id, ''), subscription_id, product, purchased_at,
                   refunded_at, statement_timestamp(), reason_code, reason_label, source_code, refund_type, quantity,
                   percentage_milli,
                   -- An estimate from configured prices until the Orders API says what was refunded.
                   CASE WHEN estimated THEN configured_price ELSE price_milli END,
                   CASE WHEN estimated THEN sale_currency ELSE currency END,
                   environment, $27, $27, payload, reversed_at,
                   CASE WHEN estimated THEN configured_price * quantity ELSE gross END, tax,
                   CASE WHEN estimated THEN CASE WHEN configured_price IS NOT NULL
                                                 THEN \(RefundAmountRule.estimatePrecision) END
                        ELSE amount_precision END,
                   CASE WHEN estimated THEN CASE WHEN configured_price IS NOT NULL
                                                 THEN '\(AmountSource.configured.rawValue)' END
                        WHEN gross IS NOT NULL THEN 'store' END,
                   CASE WHEN estimated AND configured_price IS NULL AND product = ANY ($28::text[]) THEN 'no_configured_price'
                        ELSE amount_note END,
                   buyer_country, refund_reason, revoked
            FROM resolved
        \(onConflict)
            RETURNING (xmax = 0) AS inserted
        )
        SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
        FROM merged
        """
    }

    /// The records as the statement reads them (`incoming`), and with what the database knows of each (`resolved`,
    /// left open): its subscription, its product, the estimate of a voided row, a reversal Apple sent first.
    private static let resolvedSQL = """
        WITH incoming AS (
            SELECT * FROM ROWS FROM (
                    unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[],
                           $9::int[], $10::text[], $11::int[], $12::text[], $13::int[], $14::int[], $15::bigint[],
                           $16::bigint[], $17::bigint[], $18::smallint[], $19::boolean[], $20::text[], $21::text[],
                           $22::text[], $23::text[], $24::text[], $25::boolean[]),
                    jsonb_array_elements($26::jsonb))
                AS t(order_id, part_key, original_id, product_id, purchased_at, refunded_at, reason_code,
                     reason_label, source_code, refund_type, quantity, percentage_milli, price_milli, gross, tax,
                     amount_precision, estimated, amount_note, currency, environment, buyer_country, refund_reason,
                     revoked, payload)
        ), resolved AS (
            SELECT i.*, s.id AS subscription_id, coalesce(i.product_id, s.product_id) AS product,
                   p.price_milli AS configured_price, coalesce(p.currency, o.currency) AS sale_currency,
                   v.reversed_at
            FROM incoming i
            -- Each lookup is a probe by key per row (OFFSET 0 keeps the planner from flattening it): in a run that
            -- grows these tables the statistics lag, and joins planned as scans of the app's every row made each
            -- batch cost in proportion to the ledger (most of a 236,000-row backfill's database time).
            LEFT JOIN LATERAL (
                SELECT id, product_id, current_order_id FROM subscription
                WHERE app_id = $1 AND store_id = i.original_id OFFSET 0
            ) s ON true
        \(ConfiguredPrices.saleCurrencyJoin(
            alias: "o", orderId: "i.order_id", currentOrderId: "s.current_order_id",
            when: "i.estimated AND coalesce(i.product_id, s.product_id) = ANY ($28::text[])"))
        \(ConfiguredPrices.priceJoin(
            alias: "p", first: 28, product: "coalesce(i.product_id, s.product_id)", currency: "o.currency",
            when: "i.estimated"))
            LEFT JOIN LATERAL (
                SELECT reversed_at FROM apple_refund_reversal
                WHERE $2 = 'apple' AND app_id = $1 AND transaction_id = i.order_id OFFSET 0
            ) v ON true
        """
}
