import Foundation
import Postgres

extension RefundReport {
    /// Column names of the grouped report, in order; stable (documented in docs/commands.md) because spreadsheets and
    /// pipelines depend on them.
    public var groupColumns: [String] {
        options.by.map(\.rawValue) + [
            "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds", "family_revokes",
            "reversed_refunds", "not_revoked_refunds",
        ] + (options.basis == .recorded ? ["restated_amounts"] : [])
            + (options.rates.map { rates in ["gross", "tax", "net"].map { "\($0)_\(rates.base)" } } ?? [])
    }

    /// What every report says its amounts are.
    static let amountsAre =
        "amounts in each currency's major units (10.99 USD, 1990 JPY): each refund rounded half to even to the "
        + "currency's minor unit, then added; net = gross - tax; a reversal is a negative entry in its own period; "
        + appleAmountsAre

    /// What Apple's amounts are (Apple asks that a report built on its `price` say so).
    static let appleAmountsAre =
        "Apple's amounts are the store-reported price (its signed price and refunded share; App Store Connect's "
        + "financial reports, not these, are Apple's record of revenue)"

    /// Exact nanos in the currency's major units with its minor unit's decimals, or empty when unknown.
    static func major(_ nanos: Decimal?, _ currency: String?) -> String {
        guard let nanos else { return "" }
        return Money.format(nanos: nanos, currency: currency ?? "")
    }

    /// The amount cells of a group: gross, tax, net.
    static func amounts(_ group: Group) -> [String] {
        let currency = group.keys["currency"]
        return [major(group.grossNanos, currency), major(group.taxNanos, currency), major(group.netNanos, currency)]
    }

    /// With `--rates`: a group's amounts converted to the base currency (gross, tax, net = gross - tax as printed).
    func convertedAmounts(_ group: Group) -> [String] {
        guard let base = options.rates?.base else { return [] }
        let net = group.convertedTaxNanos.flatMap { tax in group.convertedGrossNanos.map { $0 - tax } }
        return [
            Self.major(group.convertedGrossNanos, base), Self.major(group.convertedTaxNanos, base),
            Self.major(net, base),
        ]
    }

    /// The counts and amounts of a group or total, after its key columns.
    func figures(_ group: Group) -> [String] {
        [String(group.refunds), String(group.quantity)] + Self.amounts(group)
            + [
                String(group.unknownAmount), String(group.familyRevokes), String(group.reversed),
                String(group.notRevoked),
            ] + (options.basis == .recorded ? [String(group.restated)] : []) + convertedAmounts(group)
    }

    /// The grouped report as rows of text cells, header first.
    public func cells() -> [[String]] {
        [groupColumns] + groups.map { group in options.by.map { group.keys[$0.rawValue] ?? "" } + figures(group) }
    }

    /// RFC 4180 CSV: a header row, CRLF line ends, fields quoted when they hold a comma, quote or line break.
    public func csv() -> String {
        cells().map(Self.csvLine).joined()
    }

    static func csvLine(_ row: [String]) -> String {
        row.map(csvField).joined(separator: ",") + "\r\n"
    }

    static func csvField(_ value: String) -> String {
        // Bytes, not Characters: "\r\n" is one Character, and so is a quote or comma followed by a combining mark.
        guard value.utf8.contains(where: { $0 == 44 || $0 == 34 || $0 == 10 || $0 == 13 }) else { return value }
        return "\"" + String(decoding: value.utf8.flatMap { $0 == 34 ? [34, 34] : [$0] }, as: UTF8.self) + "\""
    }

    /// The first line of a table: what it covers and what its amounts are.
    var tableTitle: String {
        "Refunds \(options.from) to \(options.to) (\(options.timeZone), by \(options.basis.rawValue) time, "
            + "\(options.environment.rawValue)); \(Self.amountsAre)"
    }

    /// Said where a currency's totals are given per platform (``totalsByCurrency()``).
    static let splitTotalsNote =
        "Where a currency's tax is stated by one store and not the other (Apple states none), its totals are given "
        + "per platform, each with its own tax and net; together they are the currency's total"

    /// The line saying how many entries have no amount and so are in no total.
    var unknownAmountLine: String {
        "Refunds and reversals without a known amount, in no amount or total: \(unknownAmount)"
    }

    /// With `--basis recorded`, when the range books any: what its `restated` entries are.
    var restatedLine: String? {
        let count = groups.map(\.restated).reduce(0, +)
        guard options.basis == .recorded, count > 0 else { return nil }
        return "Amounts restated, stated by the store after their refund's month closed and booked when stated "
            + "(the old amount out, the new one in; restated_amounts): \(count)"
    }

    /// A fixed-width table for a terminal, with a totals line per currency.
    public func table() -> String {
        var rows = cells()
        if !groups.isEmpty {
            for (_, total) in totalsByCurrency() {
                var line = options.by.map { _ in "" }
                for key in [RefundReportOptions.Dimension.currency, .source, .environment] {
                    if let index = options.by.firstIndex(of: key) { line[index] = total.keys[key.rawValue] ?? "" }
                }
                // A platform's part of a currency whose tax only some platforms state (``totalsByCurrency()``).
                var label = "TOTAL"
                if let platform = total.keys["platform"] {
                    if let index = options.by.firstIndex(of: .platform) {
                        line[index] = platform
                    } else {
                        label += " \(platform)"
                    }
                }
                // Always labelled: when currency (or source) is the first column, the label shares it.
                line[0] = line[0].isEmpty ? label : "\(label) \(line[0])"
                rows.append(line + figures(total))
            }
        }
        var widths = [Int](repeating: 0, count: rows.first?.count ?? 0)
        for row in rows { Self.widen(&widths, row) }
        var lines = [tableTitle] + rows.map { Self.padded($0, widths) }
        if rows.count == 1 { lines.append("(no refunds from \(options.from) to \(options.to))") }
        if groups.isEmpty || groups.contains(where: { $0.keys["platform"] != "apple" }) {
            lines.append(Self.googleCoverage)
        }
        lines.append(unknownAmountLine)
        if let restatedLine { lines.append(restatedLine) }
        if totalsSplitByPlatform { lines.append(Self.splitTotalsNote) }
        if let rates = options.rates {
            for (source, total) in convertedTotals() {
                let amounts = convertedAmounts(total)
                lines.append(
                    "TOTAL in \(rates.base) (\(source)): gross \(amounts[0]), tax \(amounts[1].isEmpty ? "unknown" : amounts[1]), net \(amounts[2].isEmpty ? "unknown" : amounts[2])"
                )
            }
            if !ratesUsed.isEmpty {
                lines.append(
                    "rates used (1 unit in \(rates.base)): "
                        + ratesUsed.map { "\($0.day) \($0.currency) \($0.rate)" }.joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Widens `widths` to hold `row`.
    static func widen(_ widths: inout [Int], _ row: [String]) {
        TextColumns.widen(&widths, row)
    }

    /// A table line: each cell padded to its column's width (in Characters, as `widen` measures), trailing spaces
    /// dropped.
    static func padded(_ row: [String], _ widths: [Int]) -> String {
        TextColumns.line(row, widths: widths)
    }

    /// The request as every JSON report states it.
    var jsonHeader: [String: Any] {
        [
            "from": options.from, "to": options.to, "timeZone": options.timeZone,
            "basis": options.basis.rawValue, "environment": options.environment.rawValue,
            "amountsAre": Self.amountsAre, "googleCoverage": Self.googleCoverage,
            "unknownAmountRefunds": unknownAmount,
            "daily": daily.map { ["day": $0.day, "platform": $0.platform, "refunds": $0.refunds] },
        ]
    }

    /// JSON for pipelines: the request, the rows (amounts as decimal strings in the currency's major units, `null`
    /// when unknown), the totals and the chart series.
    public func json() throws -> String {
        var object = jsonHeader
        object["by"] = options.by.map(\.rawValue)
        object["groups"] = groups.map(jsonObject)
        // The table's TOTAL rows, the same figures: per currency and amount source.
        object["totals"] = totalsByCurrency().map { jsonObject($0.1) }
        if let rates = options.rates {
            object["rates"] = [
                "base": rates.base,
                "used": ratesUsed.map { ["day": $0.day, "currency": $0.currency, "rate": "\($0.rate)"] },
                "totals": convertedTotals().map { _, total -> [String: Any] in
                    let amounts = convertedAmounts(total)
                    var object: [String: Any] = total.keys
                    object["gross"] = amounts[0].isEmpty ? NSNull() : amounts[0]
                    object["tax"] = amounts[1].isEmpty ? NSNull() : amounts[1]
                    object["net"] = amounts[2].isEmpty ? NSNull() : amounts[2]
                    return object
                },
            ]
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

extension RefundReport {
    /// A group (or a total) as a JSON object: its keys, counts and amounts in the currency's major units.
    fileprivate func jsonObject(_ group: Group) -> [String: Any] {
        var row: [String: Any] = group.keys
        row["refunds"] = group.refunds
        row["quantity"] = group.quantity
        let currency = group.keys["currency"] ?? ""
        row["gross"] = group.grossNanos.map { Money.format(nanos: $0, currency: currency) } ?? NSNull()
        row["tax"] = group.taxNanos.map { Money.format(nanos: $0, currency: currency) } ?? NSNull()
        row["net"] = group.netNanos.map { Money.format(nanos: $0, currency: currency) } ?? NSNull()
        row["unknown_amount_refunds"] = group.unknownAmount
        row["family_revokes"] = group.familyRevokes
        row["not_revoked_refunds"] = group.notRevoked
        if let base = options.rates?.base {
            let converted = convertedAmounts(group)
            for (index, name) in ["gross", "tax", "net"].enumerated() {
                row["\(name)_\(base)"] = converted[index].isEmpty ? NSNull() : converted[index]
            }
        }
        row["reversed_refunds"] = group.reversed
        if options.basis == .recorded { row["restated_amounts"] = group.restated }
        return row
    }
}

/// ISO 8601 text for report cells (UTC, milliseconds).
enum PostgresTimestampText {
    static func iso(_ date: Date) -> String {
        // "2026-11-22T04:32:50.123456Z" -> "2026-11-22T04:32:50.123Z"
        PostgresTimestamp.millis(date)
    }
}
