import Foundation
import Postgres
import Testing

@testable import Reports

/// The HTML page: a chart that stays readable over long ranges, and notes that say what is not in the figures.
@Suite("RefundReport HTML page")
struct RefundReportHTMLTests {
    static func report(from: String, to: String, daily: [RefundReport.DailyPoint]) -> RefundReport {
        RefundReport(options: RefundReportOptions(from: from, to: to), groups: [], daily: daily)
    }

    static func point(_ day: String, _ platform: String = "apple", _ refunds: Int = 1) -> RefundReport.DailyPoint {
        RefundReport.DailyPoint(day: day, platform: platform, refunds: refunds)
    }

    /// Bars by day up to 60 days, by week (from Monday) up to a year, by month up to ten years, then by year; the
    /// counts, worked out here by hand, land in the right bar.
    @Test func barsWidenWithTheRange() {
        let month = Self.report(from: "2026-11-01", to: "2026-11-30", daily: [Self.point("2026-11-30")]).chartBars()
        #expect(month.0 == .day && month.1.count == 30)
        #expect(month.1.last?.counts == ["apple": 1] && month.1.last?.label == "11-30")

        // 2026-01-01 is a Thursday: the first week is Thu 1 to Sun 4 January, then weeks from Monday 5 January; the
        // last, Mon 28 to Thu 31 December: 53 bars.
        let year = Self.report(
            from: "2026-01-01", to: "2026-12-31",
            daily: [
                Self.point("2026-01-01"), Self.point("2026-01-04", "google", 2), Self.point("2026-01-05"),
                Self.point("2026-12-31", "apple", 3),
            ]
        ).chartBars()
        #expect(year.0 == .week && year.1.count == 53)
        #expect(year.1[0].counts == ["apple": 1, "google": 2] && year.1[0].title == "2026-01-01 to 2026-01-04")
        #expect(year.1[1].counts == ["apple": 1] && year.1[1].label == "01-05")
        #expect(year.1[52].counts == ["apple": 3] && year.1[52].title == "2026-12-28 to 2026-12-31")

        let years = Self.report(
            from: "2024-02-15", to: "2026-12-31", daily: [Self.point("2024-02-29"), Self.point("2024-03-01")]
        ).chartBars()
        #expect(years.0 == .month && years.1.count == 35)
        #expect(years.1[0].counts == ["apple": 1] && years.1[0].title == "2024-02-15 to 2024-02-29")
        #expect(years.1[1].label == "2024-03" && years.1[1].counts == ["apple": 1])

        let century = Self.report(from: "2000-01-01", to: "2100-01-01", daily: [Self.point("2026-11-26")]).chartBars()
        #expect(century.0 == .year && century.1.count == 101)
        #expect(century.1[26].counts == ["apple": 1] && century.1[26].label == "2026")
    }

    /// Labels never overlap: at 10 px, a digit or dash is at most 6 px wide, so two label centres must be at least
    /// the longer label's length x 6 px apart.
    @Test(arguments: [
        ("2026-11-01", "2026-11-01"), ("2026-11-01", "2026-11-30"), ("2026-09-01", "2026-10-30"),
        ("2026-01-01", "2026-12-31"), ("2024-01-01", "2026-12-31"), ("2017-01-01", "2026-12-31"),
        ("2000-01-01", "2100-01-01"),
    ])
    func labelsNeverOverlap(_ from: String, _ to: String) throws {
        let svg = Self.report(from: from, to: to, daily: [Self.point(from)]).chartSVG()
        let labels = svg.matches(of: #/<text x="(\d+)" y="266" font-size="10" text-anchor="middle">([^<]+)</text>/#)
            .map { (x: Int($0.output.1)!, text: String($0.output.2)) }
        try #require(!labels.isEmpty)
        for (left, right) in zip(labels, labels.dropFirst()) {
            let length = max(left.text.count, right.text.count) * 6
            #expect(right.x - left.x >= length, "\(left) and \(right) overlap")
        }
        // At most ten years of months (121 bars), so each bar is at least 7 px wide.
        let bars = Self.report(from: from, to: to, daily: []).chartBars().1
        #expect(bars.count <= 121)
    }

    /// The notes: where tax and net are blank and why; how many refunds have no amount and are in no total.
    @Test func notesSayWhatIsBlankAndWhatIsLeftOut() throws {
        let ledger = try ReportLedger(prefix: "htmlnotes")
        try ledger.insert([
            ReportLedger.Row(order: "t1", refundedAt: "2026-11-01T10:00:00Z", gross: 10990),
            ReportLedger.Row(order: "t2", refundedAt: "2026-11-01T11:00:00Z", gross: 5495),
            ReportLedger.Row(order: "t3", refundedAt: "2026-11-01T12:00:00Z", gross: nil, currency: nil),
            ReportLedger.Row(
                app: "droid", platform: "google", order: "GPA.1", refundedAt: "2026-11-01T12:00:00Z", gross: 1190,
                tax: 190, currency: "EUR"),
            ReportLedger.Row(
                app: "droid", platform: "google", order: "GPA.2", refundedAt: "2026-11-01T13:00:00Z", gross: 990,
                source: "configured", currency: "EUR"),
        ])
        for detail in [false, true] {
            let html = try ledger.text(
                RefundReportOptions(
                    from: "2026-11-01", to: "2026-11-01", by: detail ? [] : [.platform], detail: detail),
                .html)
            #expect(
                html.contains(
                    "Tax and net are blank where the store does not give them: apple: 2 (Apple does not state the "
                        + "tax it refunded); google: 1 (estimated from configured prices, which carry no tax)."),
                "\(html)")
            #expect(html.contains("Refunds and reversals without a known amount, in no amount or total: 1."))
        }
    }
}
