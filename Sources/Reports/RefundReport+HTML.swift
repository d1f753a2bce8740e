import Foundation

extension RefundReport {
    /// A self-contained HTML page (no scripts, no external files): what the amounts are and what is not in them, a
    /// bar chart of refunds per platform (inline SVG), the report's table, and the totals per currency (with
    /// `--rates`, also in the base currency).
    public func html(title: String = "Refunds") -> String {
        var page = htmlHead(title: title) + htmlTableHead(groupColumns)
        for group in groups {
            page += htmlRow(options.by.map { group.keys[$0.rawValue] ?? "" } + figures(group), columns: groupColumns)
        }
        if groups.isEmpty { page += htmlEmptyRow(columns: groupColumns.count) }
        page += "</tbody></table>\n"
        if !groups.isEmpty { page += totalsHTML() }
        return page + "</body></html>\n"
    }

    /// The page up to the report's table: title, notes, chart.
    func htmlHead(title: String) -> String {
        let heading =
            "\(title) \(options.from) to \(options.to) (\(options.timeZone), by \(options.basis.rawValue) time, "
            + "\(options.environment.rawValue))"
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(Self.escape(heading))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
            table { border-collapse: collapse; margin-top: 1.5em; }
            th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            th { background: #f3f3f3; }
            .note { color: #666; }
            .legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
            </style></head><body>
            <h1>\(Self.escape(heading))</h1>
            <p class="note">Amounts are what the stores say they refunded (source <code>store</code>) or estimates
            from configured prices (source <code>configured</code>), in each currency's major units (10.99 USD, 1990
            JPY), tax included in gross; net is gross minus tax. Each refund is rounded half to even to its currency's
            minor unit, then added: every total is the sum of the rows above it. A refund stays in the period it was
            booked in; a reversal is a negative entry in its own period (counted in reversed_refunds). Apple
            family-sharing revocations (no money moved) are counted apart.</p>
            <p class="note">\(Self.escape(Self.googleCoverage)).</p>

            """
        if let note = taxNote { page += "<p class=\"note\">\(Self.escape(note))</p>\n" }
        page += "<p class=\"note\">\(Self.escape(unknownAmountLine)).</p>\n"
        return page + chartSVG()
    }

    /// Why tax and net are blank on some rows, when they are: the store does not state the tax it refunded.
    var taxNote: String? {
        var counts: [String: Int] = [:]
        for point in daily where point.taxUnstated > 0 { counts[point.platform, default: 0] += point.taxUnstated }
        guard !counts.isEmpty else { return nil }
        let reasons = counts.sorted { $0.key < $1.key }.map { platform, count in
            let why =
                platform == "apple"
                ? "Apple does not state the tax it refunded"
                : "estimated from configured prices, which carry no tax"
            return "\(platform): \(count) (\(why))"
        }
        return "Tax and net are blank where the store does not give them: " + reasons.joined(separator: "; ") + "."
    }

    /// The table's opening, up to its first row.
    func htmlTableHead(_ columns: [String]) -> String {
        "<table>\n<thead><tr>" + columns.map { "<th>\(Self.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
    }

    /// Columns printed right-aligned.
    static let numericColumns: Set<String> = [
        "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds", "family_revokes",
        "reversed_refunds", "not_revoked_refunds", "price", "percentage",
    ]

    /// Whether a column holds figures (right-aligned), converted amounts (`gross_EUR`) included.
    static func isNumeric(_ column: String) -> Bool {
        numericColumns.contains(column) || ["gross_", "tax_", "net_"].contains { column.hasPrefix($0) }
    }

    /// One table row.
    func htmlRow(_ cells: [String], columns: [String]) -> String {
        var html = "<tr>"
        for (index, cell) in cells.enumerated() {
            html += (Self.isNumeric(columns[index]) ? "<td class=\"n\">" : "<td>") + Self.escape(cell) + "</td>"
        }
        return html + "</tr>\n"
    }

    func htmlEmptyRow(columns: Int) -> String {
        "<tr><td colspan=\"\(columns)\">No refunds in this range.</td></tr>\n"
    }

    /// The totals per currency (the table's TOTAL rows) and, with `--rates`, the grand totals in the base currency.
    func totalsHTML() -> String {
        let columns = ["currency", "source"] + Array(groupColumns.dropFirst(options.by.count))
        var html = "<h2>Totals per currency</h2>\n" + htmlTableHead(columns)
        for (_, total) in totalsByCurrency() {
            html += htmlRow(
                [total.keys["currency"] ?? "", total.keys["source"] ?? ""] + figures(total), columns: columns)
        }
        html += "</tbody></table>\n"
        guard let rates = options.rates else { return html }
        let base = rates.base
        let grand = ["source", "gross_\(base)", "tax_\(base)", "net_\(base)"]
        html += "<h2>Grand total in \(Self.escape(base))</h2>\n" + htmlTableHead(grand)
        for (source, total) in convertedTotals() {
            html += htmlRow([source] + convertedAmounts(total), columns: grand)
        }
        html += "</tbody></table>\n"
        if !ratesUsed.isEmpty {
            let used = ratesUsed.map { "\($0.day) \($0.currency) \($0.rate)" }.joined(separator: ", ")
            html += "<p class=\"note\">Rates used (1 unit in \(Self.escape(base))): \(Self.escape(used)).</p>\n"
        }
        return html
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
