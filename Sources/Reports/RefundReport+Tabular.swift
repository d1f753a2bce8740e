import Foundation
import Postgres

extension RefundReport {
    /// Column names of the grouped report, in order; stable (documented in the README) because spreadsheets and
    /// pipelines depend on them.
    public var groupColumns: [String] {
        options.by.map(\.rawValue) + [
            "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds", "family_revokes",
            "reversed_refunds", "not_revoked_refunds",
        ] + (options.rates.map { rates in ["gross", "tax", "net"].map { "\($0)_\(rates.base)" } } ?? [])
    }

    /// Column names of the detail report.
    public static let detailColumns = [
        "refunded_at", "day", "platform", "app", "order_id", "part", "original_id", "product", "reason_code", "reason",
        "type", "quantity", "percentage", "price", "gross", "tax", "net", "currency", "country", "source", "note",
        "reversed_at", "environment",
    ]

    /// A detail row's note as shown: an Apple family revoke reads "revoked (family)" (no money moved).
    static func noteText(_ note: String?) -> String {
        note == "family_revoke" ? "revoked (family)" : note ?? ""
    }

    /// Exact nanos in the currency's minor units (half to even), or empty when unknown.
    static func minor(_ nanos: Decimal?, _ currency: String?) -> String {
        guard let nanos else { return "" }
        return Money.format(nanos: nanos, currency: currency ?? "")
    }

    /// The amount cells of a group: gross, tax, net.
    static func amounts(_ group: Group) -> [String] {
        let currency = group.keys["currency"]
        return [minor(group.grossNanos, currency), minor(group.taxNanos, currency), minor(group.netNanos, currency)]
    }

    /// With `--rates`: a group's amounts converted to the base currency (gross, tax, net).
    func convertedAmounts(_ group: Group) -> [String] {
        guard let base = options.rates?.base else { return [] }
        let net = group.convertedTaxNanos.flatMap { tax in group.convertedGrossNanos.map { $0 - tax } }
        return [
            Self.minor(group.convertedGrossNanos, base), Self.minor(group.convertedTaxNanos, base),
            Self.minor(net, base),
        ]
    }

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
                        detail.priceMilli.map(Money.units) ?? "", Self.minor(detail.grossNanos, detail.currency),
                        Self.minor(detail.taxNanos, detail.currency),
                        Self.minor(
                            detail.taxNanos.flatMap { tax in detail.grossNanos.map { $0 - tax } }, detail.currency),
                        detail.currency ?? "", detail.country ?? "", detail.source ?? "", Self.noteText(detail.note),
                        detail.reversedAt.map(PostgresTimestampText.iso) ?? "",
                        detail.environment ?? "",
                    ]
                }
        }
        return [groupColumns]
            + groups.map { group in
                options.by.map { group.keys[$0.rawValue] ?? "" }
                    + [String(group.refunds), String(group.quantity)] + Self.amounts(group)
                    + [
                        String(group.unknownAmount), String(group.familyRevokes), String(group.reversed),
                        String(group.notRevoked),
                    ]
                    + convertedAmounts(group)
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
            for (_, total) in totalsByCurrency() {
                var line = options.by.map { _ in "" }
                if let index = options.by.firstIndex(of: .currency) { line[index] = total.keys["currency"] ?? "" }
                if let index = options.by.firstIndex(of: .source) { line[index] = total.keys["source"] ?? "" }
                // Always labelled: when currency (or source) is the first column, the label shares it.
                line[0] = line[0].isEmpty ? "TOTAL" : "TOTAL \(line[0])"
                rows.append(
                    line + [String(total.refunds), String(total.quantity)] + Self.amounts(total)
                        + [
                            String(total.unknownAmount), String(total.familyRevokes), String(total.reversed),
                            String(total.notRevoked),
                        ]
                        + convertedAmounts(total))
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
        if !options.detail, groups.contains(where: { $0.keys["platform"] != "apple" }) {
            lines.append(Self.googleCoverage)
        }
        if let rates = options.rates, !options.detail {
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
        lines.insert(
            "Refunds \(options.from) to \(options.to) (\(options.timeZone)); amounts in each currency's minor units",
            at: 0)
        return lines.joined(separator: "\n") + "\n"
    }

    /// With `--rates`: converted totals across every currency, per amount source.
    public func convertedTotals() -> [(String, Group)] {
        var totals: [String: Group] = [:]
        var taxUnknown: Set<String> = []
        for group in groups {
            guard let gross = group.convertedGrossNanos else { continue }
            let source = group.keys["source"] ?? ""
            var total =
                totals[source]
                ?? Group(
                    keys: ["source": source], refunds: 0, quantity: 0, grossNanos: nil, taxNanos: nil,
                    unknownAmount: 0, reversed: 0)
            total.convertedGrossNanos = (total.convertedGrossNanos ?? 0) + gross
            if let tax = group.convertedTaxNanos {
                total.convertedTaxNanos = (total.convertedTaxNanos ?? 0) + tax
            } else {
                taxUnknown.insert(source)
            }
            totals[source] = total
        }
        for source in taxUnknown { totals[source]?.convertedTaxNanos = nil }
        return totals.sorted { $0.key < $1.key }
    }

    /// Totals of standing refunds per currency and amount source (never summed across currencies, and estimated
    /// amounts never mixed into store amounts), keyed `"<currency> <source>"`.
    public func totalsByCurrency() -> [(String, Group)] {
        var totals: [String: Group] = [:]
        var taxUnknown: Set<String> = []
        for group in groups {
            let currency = group.keys["currency"] ?? ""
            let source = group.keys["source"] ?? ""
            let key = source.isEmpty ? currency : "\(currency) \(source)"
            var total =
                totals[key]
                ?? Group(
                    keys: ["currency": currency, "source": source], refunds: 0, quantity: 0, grossNanos: nil,
                    taxNanos: nil, unknownAmount: 0, reversed: 0)
            total.refunds += group.refunds
            total.quantity += group.quantity
            if let gross = group.grossNanos {
                total.grossNanos = (total.grossNanos ?? 0) + gross
                if let tax = group.taxNanos {
                    total.taxNanos = (total.taxNanos ?? 0) + tax
                } else {
                    taxUnknown.insert(key)
                }
            }
            if let converted = group.convertedGrossNanos {
                total.convertedGrossNanos = (total.convertedGrossNanos ?? 0) + converted
                if let tax = group.convertedTaxNanos {
                    total.convertedTaxNanos = (total.convertedTaxNanos ?? 0) + tax
                }
            }
            total.unknownAmount += group.unknownAmount
            total.familyRevokes += group.familyRevokes
            total.notRevoked += group.notRevoked
            total.reversed += group.reversed
            totals[key] = total
        }
        for key in taxUnknown {
            totals[key]?.taxNanos = nil
            totals[key]?.convertedTaxNanos = nil
        }
        return totals.sorted { $0.key < $1.key }
    }

    /// JSON for pipelines: the request, the rows (amounts as decimal strings in the currency's minor units, `null`
    /// when unknown) and the chart series.
    public func json() throws -> String {
        var object: [String: Any] = [
            "from": options.from, "to": options.to, "timeZone": options.timeZone,
            "amountsAre": "refunded amounts in the currency's minor units; source store or configured (estimated)",
            "googleCoverage": Self.googleCoverage,
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
                row["gross"] =
                    detail.grossNanos.map { Money.format(nanos: $0, currency: detail.currency ?? "") } ?? NSNull()
                row["tax"] =
                    detail.taxNanos.map { Money.format(nanos: $0, currency: detail.currency ?? "") } ?? NSNull()
                let net = detail.taxNanos.flatMap { tax in detail.grossNanos.map { $0 - tax } }
                row["net"] = net.map { Money.format(nanos: $0, currency: detail.currency ?? "") } ?? NSNull()
                row["currency"] = detail.currency ?? "unknown"
                row["country"] = detail.country
                row["source"] = detail.source
                row["note"] = detail.note.map { Self.noteText($0) }
                row["reversed_at"] = detail.reversedAt.map(PostgresTimestampText.iso)
                row["environment"] = detail.environment
                return row
            }
        } else {
            object["by"] = options.by.map(\.rawValue)
            object["groups"] = groups.map(jsonObject)
            // The table's TOTAL rows, the same figures: per currency and amount source.
            object["totals"] = totalsByCurrency().map { jsonObject($0.1) }
        }
        if let rates = options.rates, !options.detail {
            object["rates"] = [
                "base": rates.base,
                "used": ratesUsed.map { ["day": $0.day, "currency": $0.currency, "rate": "\($0.rate)"] },
                "totals": convertedTotals().map { source, total -> [String: Any] in
                    let amounts = convertedAmounts(total)
                    return [
                        "source": source, "gross": amounts[0],
                        "tax": amounts[1].isEmpty ? NSNull() : amounts[1],
                        "net": amounts[2].isEmpty ? NSNull() : amounts[2],
                    ]
                },
            ]
        }
        object["daily"] = daily.map { ["day": $0.day, "platform": $0.platform, "refunds": $0.refunds] }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

extension RefundReport {
    /// A group (or a total) as a JSON object: its keys, counts and amounts in the currency's minor units.
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
        return row
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
