import Foundation
import StoreCalendar

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
        /// The store environment the refund was made in: `production`, or Apple's `sandbox` (`xcode`,
        /// `localtesting` for local StoreKit testing).
        case environment
    }

    /// Which time books an entry into a period.
    public enum Basis: String, Sendable, CaseIterable {
        /// When the store says it happened: the refund's `revocationDate` / `voidedTimeMillis`, the reversal's date.
        case event
        /// When storerecon first recorded it, so a closed period's figures never change when run again later.
        case recorded
    }

    /// Which store environments a report covers.
    public enum EnvironmentFilter: String, Sendable, CaseIterable {
        /// Real money only (Google refunds and Apple production).
        case production
        /// Apple's test environments only (sandbox; also Xcode and local StoreKit testing).
        case sandbox
        /// Both, told apart by the `environment` column (added to the grouping) and totalled apart.
        case all
    }

    /// First day, `YYYY-MM-DD` in `timeZone`, inclusive.
    public var from: String
    /// Last day, `YYYY-MM-DD` in `timeZone`, inclusive.
    public var to: String
    /// Grouping columns, in the order given (currency and source are added when missing, and environment with
    /// `--environment all`: test money is never added to real money).
    public var by: [Dimension]
    /// One row per refund instead of groups.
    public var detail: Bool
    /// IANA time zone of the dates.
    public var timeZone: String
    /// Only these apps (empty: all).
    public var apps: [String]
    /// Exchange rates (`--rates FILE`): adds each group's amounts converted to `rates.base`, day by day.
    public var rates: RefundRates?
    /// Which time books an entry into a period (`--basis`).
    public var basis: Basis
    /// Which store environments are covered (`--environment`).
    public var environment: EnvironmentFilter
    /// The month as each store books it (`--month --store-periods`): Google's refunds over its Pacific month, Apple's
    /// over its fiscal period, days in US Pacific time (`from` and `to` span both); `nil`: every store from `from` to
    /// `to`.
    public var storePeriods: StorePeriods?

    /// Creates options.
    public init(
        from: String, to: String, by: [Dimension] = [.day, .platform], detail: Bool = false, timeZone: String = "UTC",
        apps: [String] = [], rates: RefundRates? = nil, basis: Basis = .event,
        environment: EnvironmentFilter = .production
    ) {
        self.from = from
        self.to = to
        var by = by.contains(.currency) ? by : by + [.currency]
        if !by.contains(.source) { by.append(.source) }
        if environment == .all, !by.contains(.environment) { by.append(.environment) }
        self.by = by
        self.detail = detail
        self.timeZone = timeZone
        self.apps = apps
        self.rates = rates
        self.basis = basis
        self.environment = environment
    }

    /// The grouping of the parts by platform that the totals are made of when `by` has no platform
    /// (``RefundReport/totalsByCurrency()``): the totals' own keys and the platform.
    var platformPartsBy: [Dimension] {
        [.platform, .currency, .source] + (by.contains(.environment) ? [.environment] : [])
    }

    /// Options for `periods.month` as each store books it: Google's Pacific month, Apple's fiscal month (its refunds
    /// left out when no Apple report of the month is loaded), days in US Pacific time; `from` and `to` span both.
    public static func storeMonth(
        _ periods: StorePeriods, by: [Dimension] = [.platform], detail: Bool = false, apps: [String] = [],
        basis: Basis = .event, environment: EnvironmentFilter = .production
    ) -> RefundReportOptions {
        let first = min(periods.google.first, periods.apple?.first ?? periods.google.first)
        let last = max(periods.google.last, periods.apple?.last ?? periods.google.last)
        var options = RefundReportOptions(
            from: first, to: last, by: by, detail: detail,
            timeZone: StorePeriods.timeZone, apps: apps, basis: basis, environment: environment)
        options.storePeriods = periods
        return options
    }

    /// Parses `--basis`.
    /// - Throws: `ReportError` (a request error) naming the accepted values.
    public static func parseBasis(_ text: String) throws -> Basis {
        guard let basis = Basis(rawValue: text) else {
            throw ReportError(
                "--basis: expected one of \(Basis.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(20))\""
            )
        }
        return basis
    }

    /// Parses `--environment`.
    /// - Throws: `ReportError` (a request error) naming the accepted values.
    public static func parseEnvironment(_ text: String) throws -> EnvironmentFilter {
        guard let environment = EnvironmentFilter(rawValue: text) else {
            throw ReportError(
                "--environment: expected one of \(EnvironmentFilter.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(20))\""
            )
        }
        return environment
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
            let length = CivilDate.days(inMonth: month, of: year)
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
}

/// A report request that cannot be served; `description` is the one line shown to the operator.
public struct ReportError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of problem it is; the command line maps it to an exit code.
    public enum Code: Sendable, Equatable {
        /// The request itself (dates, columns, options): a usage error.
        case request
        /// An input file's content (`--rates`): its line, or a day and currency it has no rate for.
        case input
        /// The configuration (`reports.timeZone` unknown to the database).
        case configuration
        /// The output could not be written, or the database returned what the report cannot read.
        case failed
    }

    /// What kind of problem it is.
    public var code: Code
    /// What is wrong.
    public var message: String

    /// Creates the error.
    public init(_ message: String, code: Code = .request) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
