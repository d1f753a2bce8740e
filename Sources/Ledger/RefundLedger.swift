import Foundation
import Logging
import Postgres

/// Writes ``RefundRecord``s of one app into the refund ledger, whichever store and job they come from: Google voided
/// pages, Google orders' refunds without revocation, Apple refund-history pages and notifications. One statement per
/// batch, each column a typed array, the payloads one JSON array; then the refunds' effect on their subscriptions.
///
/// What a repeated record changes (natural key `(app, order_id, part_key)`): the store's facts (time, reason, kind,
/// payload) are replaced. Its amount is replaced when the record states one (Apple's signed price, an order's refund
/// details); a Google voided row states none, so it fills only what is missing and never overwrites what the Orders
/// API stored. A record is rewritten only when the store's payload changed (Apple signs each answer anew: its
/// `signedDate` is left out of the comparison) or its subscription became known.
public struct RefundLedger: Sendable {
    /// The app the records belong to.
    public let appId: String
    /// Configured product prices, for the estimate of a Google voided row until the Orders API says.
    public let prices: ConfiguredPrices

    /// The ledger of one app.
    public init(appId: String, prices: ConfiguredPrices = ConfiguredPrices()) {
        self.appId = appId
        self.prices = prices
    }

    /// A batch made ready to write (``write(_:quarantined:job:runId:expectNew:logger:counters:on:)``): repeats merged
    /// (the later of a natural key wins) and the statement's parameters rendered. A job makes it beside the loop that
    /// writes (the Google paging, in the page's own task), so the loop only sends it.
    public struct Prepared: Sendable {
        /// The records as given.
        public let records: [RefundRecord]
        /// The records, repeats merged.
        let merged: [RefundRecord]
        /// How many repeats were merged away.
        let repeats: Int
        let runId: Int64?
        /// The upsert's parameters for `merged`, rendered; empty when there is nothing to write.
        let parameters: [String?]
    }

    /// Merges the records' repeats and renders the batch's parameters for run `runId`.
    public func prepare(_ records: [RefundRecord], runId: Int64?) -> Prepared {
        let (merged, repeats) = records.mergingRepeats { $0.naturalKey }
        let parameters = merged.first.map { first in
            Self.parameters(merged, app: appId, platform: first.platform, runId: runId, prices: prices)
                .map(\.postgresText)
        }
        return Prepared(
            records: records, merged: merged, repeats: repeats, runId: runId, parameters: parameters ?? [])
    }

    /// Stores records (repeats merged: the later of a natural key wins) and sets odd rows aside, inside the caller's
    /// transaction: when the database refuses the batch for its rows' sake, the rows are written one by one so
    /// exactly the refused ones are quarantined. Returns (inserted, updated); `counters` gets `merged_repeats` and
    /// `quarantined`.
    /// - Parameter expectNew: the records are probably all new (the previous page's were): a plain `INSERT` is tried
    ///   first, which spares the server the conflict check of every row; the upsert follows when a row exists.
    public func write(
        _ records: [RefundRecord], quarantined: [QuarantinedRow], job: QuarantineJob, runId: Int64?,
        expectNew: Bool = false, logger: Logger, counters: (any LedgerCounters)?, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        try write(
            prepare(records, runId: runId), quarantined: quarantined, job: job, expectNew: expectNew, logger: logger,
            counters: counters, on: connection)
    }

    /// Stores a prepared batch (see ``write(_:quarantined:job:runId:expectNew:logger:counters:on:)``).
    public func write(
        _ prepared: Prepared, quarantined: [QuarantinedRow], job: QuarantineJob, expectNew: Bool = false,
        logger: Logger, counters: (any LedgerCounters)?, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        let (merged, runId) = (prepared.merged, prepared.runId)
        counters?.add("merged_repeats", prepared.repeats)
        let (counts, refused) = try Quarantine.writeRowByRowOnRefusal(merged, on: connection) { batch in
            // The whole batch goes with its rendered parameters; a row retried alone renders its own.
            let rendered = batch.count == merged.count ? prepared.parameters : nil
            return try upsert(
                batch, runId: runId, expectNew: expectNew && batch.count == merged.count, rendered: rendered,
                on: connection)
        }
        let odd =
            quarantined
            + refused.map { record, error in
                QuarantinedRow(
                    job: job, naturalKey: record.orderId, raw: record.raw, refusal: error,
                    context: record.environment.map { ["environment": $0] } ?? [:])
            }
        try Quarantine.record(odd, app: appId, runId: runId, logger: logger, counters: counters, on: connection)
        if job == .appleRefunds {
            try Quarantine.resolveLanded(
                job: job, app: appId, keys: Quarantine.landedKeys(merged, refused: refused) { $0.orderId },
                note: "a verified copy landed", on: connection)
        }
        return counts
    }

    /// Upserts records. Returns (inserted, updated).
    /// - Parameter rendered: the parameters of these records, rendered ahead (``prepare(_:runId:)``).
    func upsert(
        _ records: [RefundRecord], runId: Int64?, expectNew: Bool = false, rendered: [String?]? = nil,
        on connection: PostgresConnection
    ) throws -> (Int, Int) {
        guard let platform = records.first?.platform else { return (0, 0) }
        precondition(records.allSatisfy { $0.platform == platform }, "one platform per batch")
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
        let row = try counts ?? connection.query(Self.upsertSQL, parameters)[0]
        let revoking = records.allSatisfy(\.revokes) ? records : records.filter(\.revokes)
        try RefundEffects.apply(
            app: appId, storeIds: revoking.map(\.originalId), orderIds: revoking.map(\.orderId),
            source: platform == .google ? "google_voided" : "apple_refunds", runId: runId, on: connection)
        return (try row.decode("inserted"), try row.decode("updated"))
    }

    /// How many of these records are not in the ledger yet (for `--dry-run`).
    public func countNew(_ records: [RefundRecord], on connection: PostgresConnection) throws -> Int {
        guard !records.isEmpty else { return 0 }
        let row = try connection.query(
            """
            SELECT count(*) AS n FROM unnest($2::text[], $3::text[]) AS i(order_id, part_key)
            WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = i.order_id
                              AND r.part_key = i.part_key)
            """,
            [appId, PostgresArray(records.map(\.orderId)), PostgresArray(records.map(\.part.key))])[0]
        return try row.decode("n")
    }

    /// The statement's parameters: the records' columns as typed arrays (`$3` ... `$25`), their payloads as one
    /// JSON array (`$26`: one `jsonb` document per batch costs the server a fraction of a `jsonb[]` of a thousand),
    /// the run (`$27`) and the configured prices per currency (`$28` ... `$31`).
    private static func parameters(
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

    /// The amount's columns on a conflict: a Google voided row states no amount, so what is stored (the Orders
    /// API's) stays and only what is missing is filled; any other record replaces them.
    private static let amountColumns = [
        "quantity", "price_milli", "currency", "gross_amount", "tax_amount", "amount_precision", "amount_source",
        "amount_note",
    ].map { name in
        "\(name) = CASE WHEN EXCLUDED.platform = 'google' AND EXCLUDED.revoked "
            + "THEN coalesce(r.\(name), EXCLUDED.\(name)) ELSE EXCLUDED.\(name) END"
    }.joined(separator: ",\n")

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

    // $1 app, $2 platform, $3 ... $25 the records' columns, $26 their payloads, $27 run id, $28 ... $31 prices.
    // The subscription comes from the purchase token or original transaction id. An estimate is in the sale's
    // currency (``ConfiguredPrices``) until the Orders API says, looked up only for a product with a price (a
    // backlog without prices pays no probe for it); a reversal Apple sent before the refund is applied as it lands.
    private static func insertSQL(onConflict: String) -> String {
        """
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
                   p.price_milli AS configured_price, coalesce(o.currency, p.currency) AS sale_currency,
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
        ), merged AS (
            INSERT INTO refund AS r (app_id, platform, order_id, part_key, original_id, subscription_id, product_id,
                                     purchased_at, refunded_at, recorded_at, reason_code, reason_label, source_code,
                                     refund_type, quantity, percentage_milli, price_milli, currency, environment,
                                     first_seen_run, last_seen_run, payload, reversed_at, gross_amount, tax_amount,
                                     amount_precision, amount_source, amount_note, buyer_country, refund_reason,
                                     revoked)
            SELECT $1, $2, order_id, part_key, nullif(original_id, ''), subscription_id, product, purchased_at,
                   refunded_at, now(), reason_code, reason_label, source_code, refund_type, quantity,
                   percentage_milli,
                   -- An estimate from configured prices until the Orders API says what was refunded.
                   CASE WHEN estimated THEN configured_price ELSE price_milli END,
                   CASE WHEN estimated THEN sale_currency ELSE currency END,
                   environment, $27, $27, payload, reversed_at,
                   CASE WHEN estimated THEN configured_price * quantity ELSE gross END, tax,
                   CASE WHEN estimated THEN CASE WHEN configured_price IS NOT NULL THEN 3 END
                        ELSE amount_precision END,
                   CASE WHEN estimated THEN CASE WHEN configured_price IS NOT NULL THEN 'configured' END
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
}
