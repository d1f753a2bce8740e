import Foundation

extension RefundReport {
    /// A self-contained HTML page (no scripts, no external files): what the amounts are and what is not in them, a
    /// bar chart of refunds per platform (inline SVG), the report's table, and the totals per currency (with
    /// `--rates`, also in the base currency).
    public func html(title: String = "Refunds") -> String {
        let columns = options.by.map(\.rawValue) + htmlFigureColumns
        var page = htmlHead(title: title) + htmlTableHead(columns)
        for group in groups {
            page += htmlRow(options.by.map { group.keys[$0.rawValue] ?? "" } + htmlFigures(group), columns: columns)
        }
        if groups.isEmpty { page += htmlEmptyRow(columns: columns.count) }
        page += "</tbody></table>\n"
        if !groups.isEmpty { page += totalsHTML() }
        return page + "</body></html>\n"
    }

    /// The figures' columns of the page's tables: the counts that are not in the amounts share one column
    /// (``htmlNotes(_:)``), so that a day's row fits a 1280-pixel screen.
    var htmlFigureColumns: [String] {
        ["refunds", "quantity", "gross", "tax", "net"]
            + (options.rates.map { rates in ["gross", "tax", "net"].map { "\($0)_\(rates.base)" } } ?? [])
            + ["notes"]
    }

    /// A group's (or total's) cells under ``htmlFigureColumns``.
    func htmlFigures(_ group: Group) -> [String] {
        [String(group.refunds), String(group.quantity)] + Self.amounts(group) + convertedAmounts(group)
            + [Self.htmlNotes(group)]
    }

    /// What the CSV's counting columns say, in words, leaving out the zeros: "2 amount unknown, 1 reversed".
    static func htmlNotes(_ group: Group) -> String {
        [
            (group.unknownAmount, "amount unknown"), (group.familyRevokes, "family revoked"),
            (group.reversed, "reversed"), (group.notRevoked, "not revoked"), (group.restated, "restated"),
        ].filter { $0.0 != 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
    }

    /// A column's header as people read it: `unknown_amount_refunds` is "Amount unknown", `gross_EUR` "Gross (EUR)".
    static func header(_ column: String) -> String {
        if let known = headers[column] { return known }
        for amount in ["gross", "tax", "net"] where column.hasPrefix(amount + "_") {
            return "\(headers[amount] ?? amount) (\(column.dropFirst(amount.count + 1)))"
        }
        let words = column.replacingOccurrences(of: "_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    static let headers = [
        "day": "Day", "platform": "Store", "app": "App", "product": "Product", "reason": "Reason",
        "currency": "Currency", "country": "Country", "source": "Amount source", "environment": "Environment",
        "refunds": "Refunds", "quantity": "Units", "gross": "Gross", "tax": "Tax", "net": "Net",
        "notes": "Notes", "unknown_amount_refunds": "Amount unknown", "family_revokes": "Family revoked",
        "reversed_refunds": "Reversed", "not_revoked_refunds": "Not revoked",
        "restated_amounts": "Restated", "refunded_at": "Refunded at",
        "order_id": "Order", "original_id": "Original id", "reason_code": "Reason code", "type": "Type",
        "percentage": "Share %", "price": "Sale price", "note": "Note", "reversed_at": "Reversed at",
        "entry": "Entry", "recorded_at": "Recorded at", "part": "Part",
    ]

    /// The page up to the report's table: title, notes, chart.
    func htmlHead(title: String) -> String {
        let heading =
            "\(title) \(options.from) to \(options.to) (\(options.timeZone), by \(options.basis.rawValue) time, "
            + "\(options.environment.rawValue))"
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(Self.escape(heading))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
            table { border-collapse: collapse; margin-top: 1.5em; }
            th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; }
            td { white-space: nowrap; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            th { background: #f3f3f3; font-weight: 600; vertical-align: bottom; }
            .note { color: #666; }
            .charts { display: flex; flex-wrap: wrap; gap: 0 1.5em; align-items: flex-start; }
            .charts figure { margin: 1em 0 0; }
            .legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
            .wide { overflow-x: auto; }
            </style></head><body>
            <h1>\(Self.escape(heading))</h1>
            <p class="note">Amounts are what the stores say they refunded (source <code>store</code>) or estimates
            from configured prices (source <code>configured</code>), in each currency's major units (10.99 USD, 1990
            JPY), tax included in gross; net is gross minus tax. Each refund is rounded half to even to its currency's
            minor unit, then added: every total is the sum of the rows above it. A refund stays in the period it was
            booked in; a reversal is a negative entry in its own period (counted in reversed_refunds). Apple
            family-sharing revocations (no money moved) are counted apart.</p>
            <p class="note">\(Self.escape(Self.appleAmountsAre)).</p>
            <p class="note">\(Self.escape(Self.googleCoverage)).</p>

            """
        if let note = taxNote { page += "<p class=\"note\">\(Self.escape(note))</p>\n" }
        page += "<p class=\"note\">\(Self.escape(unknownAmountLine)).</p>\n"
        if let restatedLine { page += "<p class=\"note\">\(Self.escape(restatedLine)).</p>\n" }
        if totalsSplitByPlatform { page += "<p class=\"note\">\(Self.escape(Self.splitTotalsNote)).</p>\n" }
        if !dailyMoney.isEmpty { page += "<p class=\"note\">\(Self.escape(Self.moneyChartsNote)).</p>\n" }
        return page + "<div class=\"charts\">\n" + chartSVG() + moneyChartsSVG() + "</div>\n"
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
        "<table>\n<thead><tr>" + columns.map { "<th>\(Self.escape(Self.header($0)))</th>" }.joined()
            + "</tr></thead>\n<tbody>\n"
    }

    /// Columns printed right-aligned.
    static let numericColumns: Set<String> = [
        "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds", "family_revokes",
        "reversed_refunds", "not_revoked_refunds", "restated_amounts", "price", "percentage",
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
        let totals = totalsByCurrency()
        let split = totals.contains { $0.1.keys["platform"] != nil }
        let environments = totals.contains { $0.1.keys["environment"] != nil }
        let keys = ["currency", "source"] + (environments ? ["environment"] : []) + (split ? ["platform"] : [])
        let columns = keys + htmlFigureColumns
        var html = "<h2>Totals per currency</h2>\n" + htmlTableHead(columns)
        for (_, total) in totals {
            html += htmlRow(keys.map { total.keys[$0] ?? "" } + htmlFigures(total), columns: columns)
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

    /// Text for HTML, escaped scalar by scalar: a `"` or `<` followed by a combining mark is one Character, and
    /// compared as Characters it would pass unescaped (a store's field could then leave an attribute).
    static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
