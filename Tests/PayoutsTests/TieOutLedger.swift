import Foundation
import Payouts
import Postgres
import Reconciler
import StoreCalendar
import TestSupport

/// A throwaway database with a Google app `droid` and an Apple app `ios`, and helpers that write the ledger, the
/// stores' reports and the sync's history by hand for the tie-out's tests.
struct TieOutLedger {
    let connection: PostgresConnection

    init(prefix: String) throws {
        connection = try PostgresConnection(conninfo: TestDatabase.create(prefix: prefix))
        try Migrator(connection: connection).migrate()
        try connection.execute(
            """
            INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.x'), ('ios', 'apple', 'com.x')
            """)
    }

    /// A Google refund with an amount in nanos (`nil`: not priced), recorded at `recorded` (default: now).
    func google(
        _ order: String, _ at: String, gross: Int64?, tax: Int64 = 0, product: String = "pro", recorded: String? = nil,
        part: String = ""
    ) throws {
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, product_id, refunded_at, refund_type, quantity,
                                gross_amount, tax_amount, amount_precision, amount_source, currency, buyer_country,
                                recorded_at, payload, part_key)
            VALUES ('droid', 'google', $1, $2, $3::timestamptz, 'full', 1, $4,
                    CASE WHEN $4::bigint IS NOT NULL THEN $5::bigint END, 9, 'store', 'USD', 'US',
                    coalesce($6::timestamptz, now()), '{}', $7)
            """, [order, product, at, gross, tax, recorded, part])
    }

    /// An Apple refund with an amount in milliunits, reversed at `reversed` when given, recorded at `recorded`.
    func apple(
        _ id: String, _ at: String, product: String, storefront: String, currency: String, milli: Int64?,
        type: String = "full", reversed: String? = nil, recorded: String? = nil
    ) throws {
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, product_id, refunded_at, refund_type, quantity,
                                gross_amount, amount_precision, amount_source, currency, environment, reversed_at,
                                recorded_at, payload)
            VALUES ('ios', 'apple', $1, $2, $3::timestamptz, $4, 1, $5, 3, 'store', $6, 'Production',
                    $7::timestamptz, coalesce($9::timestamptz, now()), jsonb_build_object('storefront', $8::text))
            """, [id, product, at, type, milli, currency, reversed, storefront, recorded])
    }

    /// Google's earnings report of `month`: rows of one order each, booked at `booked` when given.
    func googleReport(
        month: CalendarMonth, _ rows: [(order: String, kind: String, buyer: Int64, merchant: Int64, booked: String?)],
        version: Int = 1
    ) throws {
        let (start, end) = (month.firstDay.description, month.lastDay.description)
        let report = PayoutReport(
            store: .google, reportKey: "earnings_\(month)_1-1.zip", month: month, periodStart: start, periodEnd: end,
            sourceName: "earnings_\(month)_1-1.zip", checksum: "google \(month) \(version)",
            rows: rows.enumerated().map { index, row in
                PayoutRow(
                    line: index + 2, kind: row.kind, orderId: row.order, productId: "pro", country: "US",
                    bookedAt: row.booked.flatMap { ISO8601DateFormatter().date(from: $0) }, amountCurrency: "USD",
                    amountNanos: row.buyer, merchantCurrency: "USD", merchantNanos: row.merchant)
            })
        try PayoutStore(connection: connection).store(report, app: "droid")
    }

    /// Apple's FINANCIAL report of fiscal `month` over `start` ... `end`: `R` rows of (product, country, currency,
    /// units, customer price in nanos).
    func appleReport(
        month: CalendarMonth, start: String, end: String, _ rows: [(String, String, String, Int, Int64)]
    ) throws {
        let report = PayoutReport(
            store: .apple, reportKey: "FINANCIAL:ZZ:\(start):\(end)", month: month, periodStart: start,
            periodEnd: end, sourceName: "financial-\(month).txt", checksum: "apple \(month)",
            rows: rows.enumerated().map { index, row in
                PayoutRow(
                    line: index + 2, kind: "R", productId: row.0, country: row.1, quantity: -row.3,
                    amountCurrency: row.2, amountNanos: row.4, merchantCurrency: row.2,
                    merchantNanos: -Int64(row.3) * row.4 * 7 / 10)
            })
        try PayoutStore(connection: connection).store(report, app: "ios")
    }

    /// A run of Google's voided sync that started at `started` (the ledger's history begins 30 days before it).
    func voidedSyncRan(at started: String) throws {
        try connection.execute(
            """
            INSERT INTO job_run (job, app_id, host, pid, started_at, finished_at, outcome)
            VALUES ('google_voided', 'droid', 'test', 1, $1::timestamptz, $1::timestamptz, 'ok')
            """, [started])
    }

    /// A recorded gap of Google's voided sync; returns its id.
    func gap(from: String, to: String) throws -> Int64 {
        try connection.query(
            """
            INSERT INTO sync_gap (job, app_id, gap_from, gap_to) VALUES ('google_voided', 'droid', $1, $2)
            RETURNING id
            """, [from, to])[0].decode("id")
    }
}
