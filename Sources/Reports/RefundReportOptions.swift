import Foundation

/// What `storerecon report refunds` was asked for.
public struct RefundReportOptions: Sendable, Equatable {
    /// A column the grouped report can be split by.
    public enum Dimension: String, Sendable, CaseIterable, Codable {
        /// The refund's date in the report time zone.
        case day
        /// apple or google.
        case platform
        /// The configured app id.
        case app
        /// The store product id.
        case product
        /// The store's reason label.
        case reason
        /// ISO 4217 currency. Amounts are never summed across currencies, so this column is always present.
        case currency
        /// The buyer's country (Google orders; empty where the store does not say).
        case country
        /// Where the amounts come from: `store`, `configured` (estimated) or `none`. Always present, so estimated
        /// amounts are never mixed into store amounts.
        case source
    }

    /// First day, `YYYY-MM-DD` in `timeZone`, inclusive.
    public var from: String
    /// Last day, `YYYY-MM-DD` in `timeZone`, inclusive.
    public var to: String
    /// Grouping columns, in the order given (currency and source are added when missing).
    public var by: [Dimension]
    /// One row per refund instead of groups.
    public var detail: Bool
    /// IANA time zone of the dates.
    public var timeZone: String
    /// Only these apps (empty: all).
    public var apps: [String]
    /// Exchange rates (`--rates FILE`): adds each group's amounts converted to `rates.base`, day by day.
    public var rates: RefundRates?

    /// Creates options.
    public init(
        from: String, to: String, by: [Dimension] = [.day, .platform], detail: Bool = false, timeZone: String = "UTC",
        apps: [String] = [], rates: RefundRates? = nil
    ) {
        self.from = from
        self.to = to
        var by = by.contains(.currency) ? by : by + [.currency]
        if !by.contains(.source) { by.append(.source) }
        self.by = by
        self.detail = detail
        self.timeZone = timeZone
        self.apps = apps
        self.rates = rates
    }

    /// Parses `--by day,platform,...`.
    /// - Throws: `ReportError` naming the unknown dimension.
    public static func parseDimensions(_ text: String) throws -> [Dimension] {
        var result: [Dimension] = []
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            guard let dimension = Dimension(rawValue: part) else {
                throw ReportError(
                    "--by: unknown column \"\(part)\" (expected any of \(Dimension.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            if !result.contains(dimension) { result.append(dimension) }
        }
        return result
    }

    /// Checks the dates (`YYYY-MM-DD`, a day that exists, from ≤ to).
    public func validate() throws {
        for (name, value) in [("--from", from), ("--to", to)] {
            let parts = value.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]), (1...12).contains(month)
            else { throw ReportError("\(name): expected a date as YYYY-MM-DD, got \"\(value.prefix(40))\"") }
            let length = Self.daysIn(month: month, year: year)
            guard (1...length).contains(day) else {
                throw ReportError(
                    "\(name) \(value): no such day (\(Self.monthNames[month - 1]) \(year) has \(length) days)")
            }
        }
        guard from <= to else { throw ReportError("--from \(from) is after --to \(to)") }
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

/// A report request that cannot be served; `description` is the one line shown to the operator.
public struct ReportError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What is wrong.
    public var message: String

    /// Creates the error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
