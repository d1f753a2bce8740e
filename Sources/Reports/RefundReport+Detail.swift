import Foundation
import Ledger
import Postgres

extension RefundReport {
    /// Column names of the detail report, in order; stable (documented in docs/commands.md).
    public static let detailColumns = [
        "refunded_at", "day", "platform", "app", "order_id", "part", "original_id", "product", "reason_code", "reason",
        "type", "quantity", "percentage", "price", "gross", "tax", "net", "currency", "country", "source", "note",
        "reversed_at", "environment", "entry", "recorded_at",
    ]

    /// One cell of a detail row: text, a whole number, or nothing known (empty in CSV and tables, `null` in JSON).
    enum Cell: Equatable {
        case text(String)
        case number(Int)
        case unknown

        /// The cell as CSV, table and HTML print it.
        var plain: String {
            switch self {
            case .text(let text): text
            case .number(let number): String(number)
            case .unknown: ""
            }
        }
    }

    /// Rows fetched per round trip while streaming: small enough for flat memory, large enough for throughput.
    static let fetchSize = 2000

    /// Calls `body` with every entry of the report in booking order, read in a read-only snapshot through a cursor,
    /// a chunk at a time: memory does not grow with the number of refunds.
    /// - Throws: `ReportError` for a bad request; what `body` throws.
    public static func forEachDetail(
        _ options: RefundReportOptions, on connection: PostgresConnection, _ body: (Detail) throws -> Void
    ) throws {
        try inSnapshot(options, on: connection) { try streamDetails(options, on: connection, body) }
    }

    /// The cursor loop, inside a snapshot already open.
    static func streamDetails(
        _ options: RefundReportOptions, on connection: PostgresConnection, _ body: (Detail) throws -> Void
    ) throws {
        try connection.execute(
            "DECLARE refund_detail NO SCROLL CURSOR FOR \(detailQuery(options.basis))",
            rangeParameters(options) + roundingParameters)
        while true {
            let rows = try connection.query("FETCH FORWARD \(fetchSize) FROM refund_detail")
            for row in rows { try body(try detail(row)) }
            if rows.count < fetchSize { break }
        }
        try connection.execute("CLOSE refund_detail")
    }

    private static func detail(_ row: PostgresRow) throws -> Detail {
        let entryText: String = try row.decode("entry")
        guard let entry = Entry(rawValue: entryText) else {
            throw ReportError("unexpected entry \(entryText)", code: .failed)
        }
        return Detail(
            entry: entry, bookedAt: try row.decode("booked_at"), day: try row.decode("day"),
            refundedAt: try row.decode("refunded_at"), recordedAt: try row.decode("recorded_at"),
            platform: try vocabulary(row, "platform"), app: try row.decode("app_id"),
            orderId: try row.decode("order_id"),
            part: try row.decode("part_key"), originalId: try row.decodeIfPresent("original_id"),
            product: try row.decodeIfPresent("product_id"), reasonCode: try row.decodeIfPresent("reason_code"),
            reason: try row.decode("reason_label"), type: try vocabulary(row, "refund_type"),
            quantity: try row.decode("quantity"), percentageMilli: try row.decodeIfPresent("percentage_milli"),
            priceNanos: try nanos(row, "price_nanos"), grossNanos: try nanos(row, "gross_nanos"),
            taxNanos: try nanos(row, "tax_nanos"), currency: try row.decodeIfPresent("currency"),
            country: try row.decodeIfPresent("buyer_country"), source: try vocabularyIfPresent(row, "amount_source"),
            note: try vocabularyIfPresent(row, "amount_note"), reversedAt: try row.decodeIfPresent("reversed_at"),
            environment: try row.decode("environment"))
    }

    /// A ledger column read as the ledger's vocabulary (its CHECK allows only these values).
    private static func vocabulary<Value: RawRepresentable>(_ row: PostgresRow, _ column: String) throws -> Value
    where Value.RawValue == String {
        let text: String = try row.decode(column)
        guard let value = Value(rawValue: text) else {
            throw ReportError("\(column): unexpected value \(text.debugDescription)", code: .failed)
        }
        return value
    }

    private static func vocabularyIfPresent<Value: RawRepresentable>(_ row: PostgresRow, _ column: String) throws
        -> Value?
    where Value.RawValue == String {
        guard try row.decodeIfPresent(column, as: String.self) != nil else { return nil }
        return try vocabulary(row, column) as Value
    }

    /// A detail row's note as shown: an Apple family revoke reads "revoked (family)" (no money moved).
    static func noteText(_ note: AmountNote?) -> String? {
        note == .familyRevoke ? "revoked (family)" : note?.rawValue
    }

    /// A detail row's cells, in ``detailColumns`` order. Amounts are printed in the currency's major units with its
    /// minor unit's decimals (JPY none, USD two); net is the printed gross minus the printed tax.
    static func cells(_ detail: Detail) -> [Cell] {
        func text(_ value: String?) -> Cell { value.map(Cell.text) ?? .unknown }
        func money(_ nanos: Decimal?) -> Cell {
            guard let nanos, let currency = detail.currency else { return .unknown }
            return .text(Money.format(nanos: nanos, currency: currency))
        }
        return [
            .text(PostgresTimestampText.iso(detail.refundedAt)), .text(detail.day), .text(detail.platform.rawValue),
            .text(detail.app), .text(detail.orderId), .text(detail.part), text(detail.originalId),
            text(detail.product), detail.reasonCode.map(Cell.number) ?? .unknown, .text(detail.reason),
            .text(detail.type.rawValue), .number(detail.quantity),
            text(detail.percentageMilli.map { Money.units(Int64($0)) }), money(detail.priceNanos),
            money(detail.grossNanos), money(detail.taxNanos), money(detail.netNanos), text(detail.currency),
            text(detail.country), text(detail.source?.rawValue), text(noteText(detail.note)),
            text(detail.reversedAt.map(PostgresTimestampText.iso)), .text(detail.environment),
            .text(detail.entry.rawValue), .text(PostgresTimestampText.iso(detail.recordedAt)),
        ]
    }

    /// A detail row as one JSON object on one line: every column present, `null` where nothing is known.
    static func jsonLine(_ cells: [Cell]) -> String {
        var line = "{"
        for (index, name) in detailColumns.enumerated() {
            if index > 0 { line += ", " }
            line += JSONText.string(name) + ": "
            switch cells[index] {
            case .text(let text): line += JSONText.string(text)
            case .number(let number): line += String(number)
            case .unknown: line += "null"
            }
        }
        return line + "}"
    }
}
