import Foundation
import Postgres

extension RefundReport {
    /// Column names of the grouped report, in order; stable (documented in the README) because spreadsheets and
    /// pipelines depend on them.
    public var groupColumns: [String] {
        options.by.map(\.rawValue) + ["refunds", "quantity", "amount", "unknown_amount_refunds", "reversed_refunds"]
    }

    /// Column names of the detail report.
    public static let detailColumns = [
        "refunded_at", "day", "platform", "app", "order_id", "part", "original_id", "product", "reason_code", "reason",
        "type", "quantity", "percentage", "price", "amount", "currency", "reversed_at", "environment",
    ]

    /// The report as rows of text cells, header first.
    public func cells() -> [[String]] {
        if options.detail {
            return [Self.detailColumns]
                + details.map { detail in
                    [
                        PostgresTimestampText.iso(detail.refundedAt), detail.day, detail.platform, detail.app,
                        detail.orderId, detail.part, detail.originalId ?? "", detail.product ?? "",
                        detail.reasonCode.map(String.init) ?? "", detail.reason, detail.type, String(detail.quantity),
                        detail.percentageMilli.map { Money.units(Int64($0)) } ?? "",
                        detail.priceMilli.map(Money.units) ?? "", detail.amountMilli.map(Money.units) ?? "",
                        detail.currency ?? "", detail.reversedAt.map(PostgresTimestampText.iso) ?? "",
                        detail.environment ?? "",
                    ]
                }
        }
        return [groupColumns]
            + groups.map { group in
                options.by.map { group.keys[$0.rawValue] ?? "" }
                    + [
                        String(group.refunds), String(group.quantity), Money.units(group.amountMilli),
                        String(group.unknownAmount), String(group.reversed),
                    ]
            }
    }

    /// RFC 4180 CSV: a header row, CRLF line ends, fields quoted when they hold a comma, quote or line break.
    public func csv() -> String {
        cells().map { row in row.map(Self.csvField).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ value: String) -> String {
        // Bytes, not Characters: "\r\n" is one Character, and so is a quote or comma followed by a combining mark.
        guard value.utf8.contains(where: { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }) else { return value }
        return "\"" + String(decoding: value.utf8.flatMap { $0 == 34 ? [34, 34] : [$0] }, as: UTF8.self) + "\""
    }

    /// A fixed-width table for a terminal, with a totals line per currency.
    public func table() -> String {
        var rows = cells()
        if !options.detail && !groups.isEmpty {
            for (currency, total) in totalsByCurrency() {
                var line = options.by.map { _ in "" }
                // Always labelled: when currency is the first column, the label shares it.
                if let index = options.by.firstIndex(of: .currency) { line[index] = currency }
                line[0] = options.by.first == .currency ? "TOTAL \(currency)" : "TOTAL"
                rows.append(
                    line + [
                        String(total.refunds), String(total.quantity), Money.units(total.amountMilli),
                        String(total.unknownAmount), String(total.reversed),
                    ])
            }
        }
        let widths = rows.reduce(into: [Int](repeating: 0, count: rows.first?.count ?? 0)) { widths, row in
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var lines = rows.map { row in
            row.enumerated().map { index, cell in
                cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        if lines.count == 1 { lines.append("(no refunds from \(options.from) to \(options.to))") }
        lines.insert(
            "Refunds \(options.from) to \(options.to) (\(options.timeZone)); amounts are store-reported prices", at: 0)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Totals of standing refunds per currency (never summed across currencies).
    public func totalsByCurrency() -> [(String, Group)] {
        var totals: [String: Group] = [:]
        for group in groups {
            let currency = group.keys["currency"] ?? ""
            var total =
                totals[currency]
                ?? Group(
                    keys: ["currency": currency], refunds: 0, quantity: 0, amountMilli: 0,
                    unknownAmount: 0, reversed: 0)
            total.refunds += group.refunds
            total.quantity += group.quantity
            total.amountMilli += group.amountMilli
            total.unknownAmount += group.unknownAmount
            total.reversed += group.reversed
            totals[currency] = total
        }
        return totals.sorted { $0.key < $1.key }
    }

    /// JSON for pipelines: the request, the rows (amounts as exact decimal strings and as integer milliunits) and
    /// the chart series.
    public func json() throws -> String {
        var object: [String: Any] = [
            "from": options.from, "to": options.to, "timeZone": options.timeZone,
            "amountsAre": "store-reported prices",
        ]
        if options.detail {
            object["refunds"] = details.map { detail -> [String: Any] in
                var row: [String: Any] = [
                    "refunded_at": PostgresTimestampText.iso(detail.refundedAt), "day": detail.day,
                    "platform": detail.platform, "app": detail.app, "order_id": detail.orderId, "part": detail.part,
                    "reason": detail.reason, "type": detail.type, "quantity": detail.quantity,
                ]
                row["original_id"] = detail.originalId
                row["product"] = detail.product
                row["reason_code"] = detail.reasonCode
                row["percentage"] = detail.percentageMilli.map { Money.units(Int64($0)) }
                row["price"] = detail.priceMilli.map(Money.units)
                row["amount"] = detail.amountMilli.map(Money.units)
                row["amount_milli"] = detail.amountMilli
                row["currency"] = detail.currency
                row["reversed_at"] = detail.reversedAt.map(PostgresTimestampText.iso)
                row["environment"] = detail.environment
                return row
            }
        } else {
            object["by"] = options.by.map(\.rawValue)
            object["groups"] = groups.map { group -> [String: Any] in
                var row: [String: Any] = group.keys
                row["refunds"] = group.refunds
                row["quantity"] = group.quantity
                row["amount"] = Money.units(group.amountMilli)
                row["amount_milli"] = group.amountMilli
                row["unknown_amount_refunds"] = group.unknownAmount
                row["reversed_refunds"] = group.reversed
                return row
            }
        }
        object["daily"] = daily.map { ["day": $0.day, "platform": $0.platform, "refunds": $0.refunds] }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// ISO 8601 text for report cells (UTC, milliseconds).
enum PostgresTimestampText {
    static func iso(_ date: Date) -> String {
        // "2026-11-22T04:32:50.123456Z" -> "2026-11-22T04:32:50.123Z"
        String(PostgresTimestamp.format(date).dropLast(4)) + "Z"
    }
}

extension String {
    /// The text without trailing spaces; leading ones stay, so a row whose first cell is empty keeps its columns.
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
