import Foundation
import Postgres
import StoreCalendar

/// A month as each store books it, the one recipe of the close: Google's US-Pacific calendar month and Apple's fiscal
/// month (the period of the FINANCIAL report loaded for it, from its rows' Start and End Date: never computed). Used
/// alike by `report refunds --month YYYY-MM --store-periods` and by `report tie-out`, so both book every refund and
/// reversal in the same month and print the same ledger figure.
public struct StorePeriods: Sendable, Equatable {
    /// Days in US Pacific time, the zone both stores book in.
    public static let timeZone = PacificTime.identifier

    /// The month.
    public var month: CalendarMonth
    /// Google's first and last day (`YYYY-MM-DD`, inclusive): the Pacific calendar month.
    public var google: (first: String, last: String)
    /// Apple's first and last day of the fiscal month, or `nil` when no FINANCIAL report of the month is loaded.
    public var apple: (first: String, last: String)?

    /// Creates the periods of `month` with Apple's fiscal period as given.
    public init(month: CalendarMonth, apple: (first: String, last: String)?) {
        self.month = month
        self.google = (month.firstDay.description, month.lastDay.description)
        self.apple = apple
    }

    /// Whether both name the same month and days.
    public static func == (lhs: StorePeriods, rhs: StorePeriods) -> Bool {
        lhs.month == rhs.month && lhs.google == rhs.google && lhs.apple?.first == rhs.apple?.first
            && lhs.apple?.last == rhs.apple?.last
    }

    /// The periods of `month`, Apple's read from any FINANCIAL report loaded for it (every app shares Apple's fiscal
    /// calendar).
    /// - Throws: `PostgresError`.
    public static func resolve(month: CalendarMonth, on connection: PostgresConnection) throws -> StorePeriods {
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

    /// Reads `--month YYYY-MM`.
    /// - Throws: `ReportError` (a request error) naming the text.
    public static func month(option text: String) throws -> CalendarMonth {
        do {
            return try CalendarMonth(text)
        } catch {
            throw ReportError("--month \(text.prefix(20)): expected YYYY-MM")
        }
    }
}
