import AppStoreServerAPI
import Foundation
import Logging
import Postgres

/// Writes verified Apple refund transactions into the ledger (one statement per page), queues customers, marks
/// reversals, and applies refunds to subscriptions. Only verified payloads ever reach it.
struct AppleRefundStore: Sendable {
    let app: AppConfig

    /// A refund as the ledger stores it.
    struct Row {
        var transactionId: String
        var originalTransactionId: String
        var productId: String?
        var purchasedAt: Date?
        var refundedAt: Date
        var reasonCode: Int?
        var reasonLabel: String
        var type: String
        var quantity: Int
        var percentageMilli: Int?
        var priceMilli: Int64?
        /// Legacy `amount_milli`: the refund in milliunits (a prorated one rounded half to even).
        var amountMilli: Int64?
        /// The refund, exact, in `amountPrecision` decimal digits; `nil` when unknown or when no money moved.
        var grossAmount: Int64?
        var amountPrecision: Int?
        /// Why there is no amount (`family_revoke`).
        var amountNote: String?
        var currency: String?
        var environment: String?
        var payload: String
        /// The JWS it was verified from, when known (what a quarantine keeps, so a retry verifies it again).
        var signed: String?
    }

    /// The ledger row of a verified transaction, or `nil` when it carries no revocation (not a refund).
    static func row(_ verified: VerifiedTransaction) -> Row? {
        let transaction = verified.payload
        guard let transactionId = transaction.transactionId, let revoked = transaction.revocationDate else {
            return nil
        }
        // A transaction ended by an upgrade within its group is not a refund (the receipt era set a cancellation
        // date on it too); counting it would count an upgraded-then-refunded subscription twice. Refunds and
        // revocations always carry a reason.
        if transaction.isUpgraded == true, transaction.revocationReason == nil, transaction.revocationType == nil {
            return nil
        }
        let type: String
        switch transaction.revocationType {
        case .some(.refundProrated): type = "prorated"
        case .some(.familyRevoke): type = "family_revoke"
        case .none, .some(.refundFull): type = "full"
        // A type this version does not know is kept (its raw value stays in the payload); its amount is unknown.
        case .some: type = "unknown"
        }
        let quantity = max(1, transaction.quantity ?? 1)
        let percentage = transaction.revocationPercentage
        let amount = amount(type: type, price: transaction.price, percentageMilli: percentage)
        let reason = transaction.revocationReason?.rawValue
        return Row(
            transactionId: transactionId, originalTransactionId: transaction.originalTransactionId ?? transactionId,
            productId: transaction.productId, purchasedAt: transaction.purchaseDate, refundedAt: revoked,
            reasonCode: reason, reasonLabel: reason == 0 ? "other" : reason == 1 ? "app_issue" : "unknown",
            type: type, quantity: quantity, percentageMilli: percentage, priceMilli: transaction.price,
            amountMilli: amount.milli, grossAmount: amount.gross, amountPrecision: amount.precision,
            amountNote: type == "family_revoke" ? "family_revoke" : nil, currency: transaction.currency,
            environment: transaction.environment?.rawValue,
            payload: String(decoding: verified.json, as: UTF8.self))
    }

    /// What a revocation refunded. Apple's `price` is already the total for the quantity bought ("the total amount
    /// of the transaction for the quantity the customer purchased"), in milliunits, and `revocationPercentage`
    /// (milli-percent: 50000 = 50 %) applies to that total. The exact prorated amount is `price x percentage` in 8
    /// decimal digits (3 + 5); nothing is rounded here. A family revoke moves no money (the purchaser's own
    /// transaction carries any refund): no amount. Nor has a revocation type this version does not know (`unknown`):
    /// what it refunded is not known.
    static func amount(type: String, price: Int64?, percentageMilli: Int?) -> (
        gross: Int64?, precision: Int?, milli: Int64?
    ) {
        guard let price, type != "family_revoke", type != "unknown" else { return (nil, nil, nil) }
        guard type == "prorated", let percentageMilli else { return (price, 3, price) }
        let (exact, overflow) = price.multipliedReportingOverflow(by: Int64(percentageMilli))
        guard !overflow else { return (nil, nil, nil) }
        // Legacy milliunits: half to even.
        let (whole, remainder) = exact.quotientAndRemainder(dividingBy: 100_000)
        let roundUp = remainder > 50_000 || (remainder == 50_000 && whole % 2 != 0)
        return (exact, 8, roundUp ? whole + 1 : whole)
    }

    /// What the ledger makes of a verified transaction.
    enum Intake {
        /// A refund to store.
        case refund(Row)
        /// Not a refund (no revocation, or ended by an upgrade).
        case notARefund
        /// A revocation the ledger cannot take, with the reason.
        case unstorable(String)
    }

    /// Maps a verified transaction to a ledger row, or says why it cannot be stored.
    static func intake(_ verified: VerifiedTransaction) -> Intake {
        let transaction = verified.payload
        guard transaction.revocationDate != nil else { return .notARefund }
        guard let id = transaction.transactionId, !id.isEmpty else {
            return .unstorable("transactionId: missing (the ledger's key) on a revoked transaction")
        }
        if id.count > VoidedPurchaseStore.maxOrderIdLength {
            return .unstorable(
                "transactionId: \(id.count) characters, longer than the \(VoidedPurchaseStore.maxOrderIdLength) the ledger takes"
            )
        }
        if let original = transaction.originalTransactionId, original.count > VoidedPurchaseStore.maxOrderIdLength {
            return .unstorable(
                "originalTransactionId: \(original.count) characters, longer than the \(VoidedPurchaseStore.maxOrderIdLength) the ledger takes"
            )
        }
        return row(verified).map(Intake.refund) ?? .notARefund
    }

    /// The `transactionId` an unverified JWS claims, to label its quarantine entry (never trusted beyond that).
    static func claimedTransactionId(_ jws: String) -> String? {
        struct Claim: Decodable { var transactionId: String? }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONDecoder().decode(Claim.self, from: data))?.transactionId
    }

    /// Stores refunds (repeats merged: the later one of a transaction id wins) and sets odd rows aside, inside the
    /// caller's transaction: when the database refuses the batch for its rows' sake, the rows are written one by
    /// one so exactly the refused ones are quarantined. Returns (inserted, updated).
    func write(
        _ rows: [Row], quarantined: [QuarantinedRow], job: QuarantinedRow.Job, runId: Int64?, logger: Logger,
        counters: JobCounters, on connection: PostgresConnection
    ) throws -> (Int, Int) {
        let (merged, repeats) = rows.mergingRepeats { $0.transactionId }
        counters.add("merged_repeats", repeats)
        let (counts, refused) = try Quarantine.writeRowByRowOnRefusal(merged, on: connection) { batch in
            try upsert(batch, runId: runId, on: connection)
        }
        let odd =
            quarantined
            + refused.map { row, error in
                QuarantinedRow(
                    job: job, naturalKey: row.transactionId, raw: Data((row.signed ?? row.payload).utf8),
                    refusal: error,
                    context: row.environment.map { ["environment": $0] } ?? [:])
            }
        try Quarantine.record(odd, app: app.id, runId: runId, logger: logger, counters: counters, on: connection)
        if job == .appleRefunds {
            try Quarantine.resolveLanded(
                job: job, app: app.id, keys: Quarantine.landedKeys(merged, refused: refused) { $0.transactionId },
                note: "a verified copy landed", on: connection)
        }
        return counts
    }

    /// Upserts refunds. Returns (inserted, updated).
    func upsert(_ rows: [Row], runId: Int64?, on connection: PostgresConnection) throws -> (Int, Int) {
        guard !rows.isEmpty else { return (0, 0) }
        let result = try connection.query(
            """
            WITH incoming AS (
                SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
                                     $7::int[], $8::text[], $9::text[], $10::int[], $11::int[], $12::bigint[],
                                     $13::bigint[], $14::text[], $15::text[], $16::jsonb[], $18::bigint[],
                                     $19::smallint[], $20::text[])
                    AS t(order_id, original_id, product_id, purchased_at, refunded_at, reason_code, reason_label,
                         refund_type, quantity, percentage_milli, price_milli, amount_milli, currency, environment,
                         payload, gross_amount, amount_precision, amount_note)
            ), merged AS (
                INSERT INTO refund AS r (app_id, platform, order_id, part_key, original_id, subscription_id,
                                         product_id, purchased_at, refunded_at, recorded_at, reason_code,
                                         reason_label, refund_type, quantity, percentage_milli, price_milli,
                                         amount_milli, currency, environment, first_seen_run, last_seen_run, payload,
                                         reversed_at, gross_amount, amount_precision, amount_source, amount_note)
                SELECT $1, 'apple', i.order_id, '', i.original_id, s.id, i.product_id, i.purchased_at, i.refunded_at,
                       now(), i.reason_code, i.reason_label, i.refund_type, i.quantity, i.percentage_milli,
                       i.price_milli, i.amount_milli, i.currency, i.environment, $17, $17, i.payload, v.reversed_at,
                       i.gross_amount, i.amount_precision, CASE WHEN i.gross_amount IS NOT NULL THEN 'store' END,
                       i.amount_note
                FROM incoming i
                LEFT JOIN subscription s ON s.app_id = $1 AND s.store_id = i.original_id
                LEFT JOIN apple_refund_reversal v ON v.app_id = $1 AND v.transaction_id = i.order_id
                ON CONFLICT (app_id, order_id, part_key) DO UPDATE SET
                    refunded_at = EXCLUDED.refunded_at, reason_code = EXCLUDED.reason_code,
                    reason_label = EXCLUDED.reason_label, refund_type = EXCLUDED.refund_type,
                    quantity = EXCLUDED.quantity, percentage_milli = EXCLUDED.percentage_milli,
                    price_milli = EXCLUDED.price_milli, amount_milli = EXCLUDED.amount_milli,
                    currency = EXCLUDED.currency, payload = EXCLUDED.payload,
                    gross_amount = EXCLUDED.gross_amount, amount_precision = EXCLUDED.amount_precision,
                    amount_source = EXCLUDED.amount_source, amount_note = EXCLUDED.amount_note,
                    subscription_id = coalesce(r.subscription_id, EXCLUDED.subscription_id),
                    reversed_at = coalesce(r.reversed_at, EXCLUDED.reversed_at),
                    last_seen_run = EXCLUDED.last_seen_run
                WHERE (r.refunded_at, r.refund_type, r.percentage_milli, r.amount_milli, r.gross_amount)
                      IS DISTINCT FROM (EXCLUDED.refunded_at, EXCLUDED.refund_type, EXCLUDED.percentage_milli,
                                        EXCLUDED.amount_milli, EXCLUDED.gross_amount)
                   OR (r.subscription_id IS NULL AND EXCLUDED.subscription_id IS NOT NULL)
                RETURNING (xmax = 0) AS inserted
            )
            SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
            FROM merged
            """,
            [
                app.id, PostgresTextArray(rows.map(\.transactionId)),
                PostgresTextArray(rows.map(\.originalTransactionId)),
                PostgresNullableTextArray(rows.map(\.productId)),
                PostgresNullableTextArray(rows.map { $0.purchasedAt.map(PostgresTimestamp.format) }),
                PostgresTextArray(rows.map { PostgresTimestamp.format($0.refundedAt) }),
                PostgresNullableTextArray(rows.map { $0.reasonCode.map(String.init) }),
                PostgresTextArray(rows.map(\.reasonLabel)), PostgresTextArray(rows.map(\.type)),
                PostgresTextArray(rows.map { String($0.quantity) }),
                PostgresNullableTextArray(rows.map { $0.percentageMilli.map(String.init) }),
                PostgresNullableTextArray(rows.map { $0.priceMilli.map(String.init) }),
                PostgresNullableTextArray(rows.map { $0.amountMilli.map(String.init) }),
                PostgresNullableTextArray(rows.map(\.currency)), PostgresNullableTextArray(rows.map(\.environment)),
                PostgresTextArray(rows.map(\.payload)), runId,
                PostgresNullableTextArray(rows.map { $0.grossAmount.map(String.init) }),
                PostgresNullableTextArray(rows.map { $0.amountPrecision.map(String.init) }),
                PostgresNullableTextArray(rows.map(\.amountNote)),
            ])[0]
        try RefundEffects.apply(
            app: app.id, storeIds: rows.map(\.originalTransactionId), orderIds: rows.map(\.transactionId),
            source: "apple_refunds", runId: runId, on: connection)
        return (try result.decode("inserted"), try result.decode("updated"))
    }

    /// How many of these refunds are not in the ledger yet (for `--dry-run`).
    func countNew(_ rows: [Row], on connection: PostgresConnection) throws -> Int {
        guard !rows.isEmpty else { return 0 }
        let row = try connection.query(
            """
            SELECT count(*) AS n FROM unnest($2::text[]) AS i(order_id)
            WHERE NOT EXISTS (SELECT 1 FROM refund r WHERE r.app_id = $1 AND r.order_id = i.order_id
                              AND r.part_key = '')
            """, [app.id, PostgresTextArray(rows.map(\.transactionId))])[0]
        return try row.decode("n")
    }

    /// Queues customers for a refund-history call (a customer already queued keeps its place). A customer may be
    /// listed more than once (two refunds on one notification page).
    func queue(_ originalTransactionIds: [String], reason: String, on connection: PostgresConnection) throws {
        guard !originalTransactionIds.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO apple_refund_cursor (app_id, original_transaction_id, queued_at, queue_reason)
            SELECT $1, id, now(), $3 FROM (SELECT DISTINCT id FROM unnest($2::text[]) AS i(id)) AS d
            ON CONFLICT (app_id, original_transaction_id) DO UPDATE SET
                queued_at = coalesce(apple_refund_cursor.queued_at, now()),
                queue_reason = coalesce(apple_refund_cursor.queue_reason, EXCLUDED.queue_reason)
            """, [app.id, PostgresTextArray(originalTransactionIds), reason])
    }

    /// Marks refunds reversed (`REFUND_REVERSED`); never deletes them. The subscription is flagged for a recheck,
    /// since the reversal may restore access.
    func markReversed(transactionIds: [String], at dates: [Date], on connection: PostgresConnection) throws -> Int {
        guard !transactionIds.isEmpty else { return 0 }
        try connection.execute(
            """
            INSERT INTO apple_refund_reversal (app_id, transaction_id, reversed_at)
            SELECT $1, order_id, reversed_at FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
            ON CONFLICT (app_id, transaction_id) DO NOTHING
            """,
            [app.id, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))])
        let row = try connection.query(
            """
            WITH reversed AS (
                UPDATE refund r SET reversed_at = i.reversed_at
                FROM unnest($2::text[], $3::timestamptz[]) AS i(order_id, reversed_at)
                WHERE r.app_id = $1 AND r.order_id = i.order_id AND r.part_key = '' AND r.reversed_at IS NULL
                RETURNING r.subscription_id
            ), flagged AS (
                UPDATE subscription s SET flagged_at = now(), flag_reason = 'refund_reversed', updated_at = now()
                WHERE s.id IN (SELECT subscription_id FROM reversed WHERE subscription_id IS NOT NULL)
                RETURNING s.id
            )
            SELECT count(*) AS n FROM reversed
            """,
            [app.id, PostgresTextArray(transactionIds), PostgresTextArray(dates.map(PostgresTimestamp.format))])[0]
        return try row.decode("n")
    }
}
