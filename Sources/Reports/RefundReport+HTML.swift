import Foundation

extension RefundReport {
    /// A self-contained HTML page (no scripts, no external files): a bar chart of refunds per day per platform
    /// (inline SVG) above the report's table.
    public func html(title: String = "Refunds") -> String {
        let heading = "\(title) \(options.from) to \(options.to) (\(options.timeZone))"
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(heading))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
            table { border-collapse: collapse; margin-top: 1.5em; }
            th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            th { background: #f3f3f3; }
            .note { color: #666; }
            .legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }
            </style></head><body>
            <h1>\(escape(heading))</h1>
            <p class="note">Amounts are what the stores say they refunded (source <code>store</code>) or estimates
            from configured prices (source <code>configured</code>), in each currency's minor units, tax included in
            gross; net is gross minus tax. Reversed refunds are netted out; refunds with an unknown amount and Apple
            family-sharing revocations (no money moved) are counted separately.</p>
            <p class="note">\(escape(Self.googleCoverage)).</p>

            """
        page += chartSVG()
        page += tableHTML()
        page += "</body></html>\n"
        return page
    }

    static let platformColours = ["apple": "#4a78c2", "google": "#3aa757"]

    /// Stacked bars: one per day in the range, a segment per platform.
    func chartSVG() -> String {
        let days = Self.days(from: options.from, to: options.to)
        var perDay: [String: [String: Int]] = [:]
        for point in daily { perDay[point.day, default: [:]][point.platform, default: 0] += point.refunds }
        let platforms = Array(Set(daily.map(\.platform))).sorted()
        let busiest = max(1, days.map { perDay[$0]?.values.reduce(0, +) ?? 0 }.max() ?? 1)
        // Four whole-number gridlines, evenly spaced; the axis ends at the fourth, at or above the busiest day, and
        // bars are drawn on that scale so each gridline's label is its true height.
        let tick = (busiest + 3) / 4
        let maximum = tick * 4
        let barWidth = max(4, min(40, 900 / max(1, days.count)))
        let chartHeight = 240
        let left = 50
        let width = left + barWidth * days.count + 20
        var svg = """
            <figure><figcaption>Refunds per day per platform</figcaption>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(chartHeight + 60)" role="img" \
            aria-label="Refunds per day per platform">

            """
        for step in 0...4 {
            let value = tick * step
            let y = chartHeight - chartHeight * step / 4 + 10
            svg += "<line x1=\"\(left)\" x2=\"\(width - 10)\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#eee\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" font-size=\"11\" text-anchor=\"end\">\(value)</text>\n"
        }
        for (index, day) in days.enumerated() {
            var top = chartHeight + 10
            let x = left + index * barWidth
            for platform in platforms {
                let count = perDay[day]?[platform] ?? 0
                guard count > 0 else { continue }
                let height = max(1, chartHeight * count / maximum)
                top -= height
                let colour = Self.platformColours[platform] ?? "#999"
                svg += "<rect x=\"\(x + 1)\" y=\"\(top)\" width=\"\(barWidth - 2)\" height=\"\(height)\" "
                svg += "fill=\"\(colour)\"><title>\(escape(day)) \(escape(platform)): \(count)</title></rect>\n"
            }
            if days.count <= 31 || index % max(1, days.count / 15) == 0 {
                svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(chartHeight + 26)\" font-size=\"10\" "
                svg += "text-anchor=\"middle\">\(escape(String(day.suffix(5))))</text>\n"
            }
        }
        svg += "</svg>\n<div class=\"legend\">"
        for platform in platforms {
            svg += "<span style=\"background:\(Self.platformColours[platform] ?? "#999")\"></span>\(escape(platform))"
        }
        return svg + "</div></figure>\n"
    }

    func tableHTML() -> String {
        let rows = cells()
        guard let header = rows.first else { return "" }
        var html =
            "<table>\n<thead><tr>" + header.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        let numeric = Set([
            "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds", "family_revokes",
            "reversed_refunds", "not_revoked_refunds", "price", "percentage",
        ])
        for row in rows.dropFirst() {
            html += "<tr>"
            for (index, cell) in row.enumerated() {
                html += numeric.contains(header[index]) ? "<td class=\"n\">" : "<td>"
                html += escape(cell) + "</td>"
            }
            html += "</tr>\n"
        }
        if rows.count == 1 { html += "<tr><td colspan=\"\(header.count)\">No refunds in this range.</td></tr>\n" }
        html += "</tbody></table>\n"
        guard !options.detail, !groups.isEmpty else { return html }
        // Per-currency totals (estimated amounts apart).
        html += "<h2>Totals per currency</h2>\n<table>\n<thead><tr>"
        // The table's TOTAL rows, the same columns and figures.
        let columns =
            [
                "currency", "source", "refunds", "quantity", "gross", "tax", "net", "unknown_amount_refunds",
                "family_revokes", "reversed_refunds", "not_revoked_refunds",
            ] + (options.rates.map { base in ["gross", "tax", "net"].map { "\($0)_\(base.base)" } } ?? [])
        html += columns.map { "<th>\(escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for (_, total) in totalsByCurrency() {
            let cells =
                [
                    total.keys["currency"] ?? "", total.keys["source"] ?? "", String(total.refunds),
                    String(total.quantity),
                ]
                + Self.amounts(total)
                + [
                    String(total.unknownAmount), String(total.familyRevokes), String(total.reversed),
                    String(total.notRevoked),
                ] + convertedAmounts(total)
            html += "<tr>"
            for (index, cell) in cells.enumerated() {
                html += (index >= 2 ? "<td class=\"n\">" : "<td>") + escape(cell) + "</td>"
            }
            html += "</tr>\n"
        }
        return html + "</tbody></table>\n"
    }

    /// Every date from `from` to `to` inclusive (`YYYY-MM-DD`, calendar arithmetic in UTC).
    static func days(from: String, to: String) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        guard var day = formatter.date(from: from), let end = formatter.date(from: to) else { return [] }
        var result: [String] = []
        while day <= end && result.count < 3660 {
            result.append(formatter.string(from: day))
            day = calendar.date(byAdding: .day, value: 1, to: day)!
        }
        return result
    }

    private func escape(_ text: String) -> String {
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
