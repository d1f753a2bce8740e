import Foundation
import Postgres

/// A month as each store books it, the one recipe of the close: Google's US-Pacific calendar month and Apple's fiscal
/// month (the period of the FINANCIAL report loaded for it, from its rows' Start and End Date: never computed). Used
/// alike by `report refunds --month YYYY-MM --store-periods` and by `report tie-out`, so both book every refund and
/// reversal in the same month and print the same ledger figure.
public struct StorePeriods: Sendable, Equatable {
    /// Days in US Pacific time, the zone both stores book in.
    public static let timeZone = "America/Los_Angeles"

    /// `YYYY-MM`.
    public var month: String
    /// Google's first and last day (`YYYY-MM-DD`, inclusive): the Pacific calendar month.
    public var google: (first: String, last: String)
    /// Apple's first and last day of the fiscal month, or `nil` when no FINANCIAL report of the month is loaded.
    public var apple: (first: String, last: String)?

    /// Creates the periods of `month` with Apple's fiscal period as given.
    public init(month: String, apple: (first: String, last: String)?) {
        self.month = month
        self.google = Self.calendarBounds(month)
        self.apple = apple
    }

    /// Whether both name the same month and days.
    public static func == (lhs: StorePeriods, rhs: StorePeriods) -> Bool {
        lhs.month == rhs.month && lhs.google == rhs.google && lhs.apple?.first == rhs.apple?.first
            && lhs.apple?.last == rhs.apple?.last
    }

    /// The periods of `month`, Apple's read from any FINANCIAL report loaded for it (every app shares Apple's fiscal
    /// calendar).
    /// - Throws: `ReportError` for a malformed month; `PostgresError`.
    public static func resolve(month: String, on connection: PostgresConnection) throws -> StorePeriods {
        try validate(month: month)
        let row = try connection.query(
            """
            SELECT min(period_start)::text AS first, max(period_end)::text AS last
            FROM payout_report WHERE store = 'apple' AND month = $1
            """, [month])[0]
        let first: String? = try row.decodeIfPresent("first")
        let last: String? = try row.decodeIfPresent("last")
        guard let first, let last else { return StorePeriods(month: month, apple: nil) }
        return StorePeriods(month: month, apple: (first: first, last: last))
    }

    /// Checks `YYYY-MM`.
    /// - Throws: `ReportError` (a request error).
    public static func validate(month: String) throws {
        guard month.range(of: #"^[0-9]{4}-(0[1-9]|1[0-2])$"#, options: .regularExpression) != nil else {
            throw ReportError("--month \(month.prefix(20)): expected YYYY-MM")
        }
    }

    /// The first and last day of calendar month `YYYY-MM`.
    public static func calendarBounds(_ month: String) -> (first: String, last: String) {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let (year, number) = (parts.first ?? 1970, parts.count > 1 ? parts[1] : 1)
        let days = RefundReportOptions.daysIn(month: number, year: year)
        return (String(format: "%04d-%02d-01", year, number), String(format: "%04d-%02d-%02d", year, number, days))
    }

    /// `month` moved by `delta` months.
    public static func shift(_ month: String, by delta: Int) -> String {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let index = parts[0] * 12 + parts[1] - 1 + delta
        return String(format: "%04d-%02d", index / 12, index % 12 + 1)
    }
}
