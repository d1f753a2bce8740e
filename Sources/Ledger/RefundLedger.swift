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

    /// The app's refund rows' one writer.
    var writer: RefundWriter { RefundWriter(appId: appId, prices: prices) }

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
            RefundWriter.parameters(merged, app: appId, platform: first.platform, runId: runId, prices: prices)
                .map(\.postgresText)
        }
        return Prepared(
            records: records, merged: merged, repeats: repeats, runId: runId, parameters: parameters ?? [])
    }

    /// Stores records (repeats merged: the later of a natural key wins) and sets odd rows aside, inside the caller's
    /// transaction: when the database refuses the batch for its rows' sake, the rows are written one by one so
    /// exactly the refused ones are quarantined. Returns (inserted, updated); `counters` gets `merged_repeats` and
    /// `quarantined`.
    /// - Parameters:
    ///   - expectNew: the records are probably all new (the previous page's were): a plain `INSERT` is tried first,
    ///     which spares the server the conflict check of every row; the upsert follows when a row exists.
    ///   - keepingStored: only new rows are written; a stored one stays as it is, even one another transaction
    ///     stored a moment ago (a voided-purchase notification knows less than the voided list's row).
    public func write(
        _ records: [RefundRecord], quarantined: [QuarantinedRow], job: QuarantineJob, runId: Int64?,
        expectNew: Bool = false, keepingStored: Bool = false, logger: Logger, counters: (any LedgerCounters)?,
        on connection: PostgresConnection
    ) throws -> (Int, Int) {
        try write(
            prepare(records, runId: runId), quarantined: quarantined, job: job, expectNew: expectNew,
            keepingStored: keepingStored, logger: logger, counters: counters, on: connection)
    }

    /// Stores a prepared batch (see ``write(_:quarantined:job:runId:expectNew:keepingStored:logger:counters:on:)``).
    public func write(
        _ prepared: Prepared, quarantined: [QuarantinedRow], job: QuarantineJob, expectNew: Bool = false,
        keepingStored: Bool = false, logger: Logger, counters: (any LedgerCounters)?,
        on connection: PostgresConnection
    ) throws -> (Int, Int) {
        let (merged, runId) = (prepared.merged, prepared.runId)
        counters?.add("merged_repeats", prepared.repeats)
        let (counts, refused) = try Quarantine.writeRowByRowOnRefusal(merged, on: connection) { batch in
            // The whole batch goes with its rendered parameters; a row retried alone renders its own.
            let rendered = batch.count == merged.count ? prepared.parameters : nil
            return try writer.upsert(
                batch, runId: runId, expectNew: expectNew && batch.count == merged.count, rendered: rendered,
                keepingStored: keepingStored, on: connection)
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

    /// Upserts records (``RefundWriter/upsert(_:runId:expectNew:rendered:on:)``). Returns (inserted, updated).
    func upsert(
        _ records: [RefundRecord], runId: Int64?, expectNew: Bool = false, rendered: [String?]? = nil,
        on connection: PostgresConnection
    ) throws -> (Int, Int) {
        try writer.upsert(records, runId: runId, expectNew: expectNew, rendered: rendered, on: connection)
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
}
