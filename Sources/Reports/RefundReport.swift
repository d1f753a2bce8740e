import Foundation
import Ledger
import Postgres

/// The refund report: the ledger's refunds and reversals as accounting entries, grouped (or listed) over a date
/// range, read from one consistent snapshot.
///
/// A refund is booked in the period it happened and stays there; a reversal (Apple `REFUND_REVERSED`) is a negative
/// entry in the period of the reversal, counted under `reversed`. With ``RefundReportOptions/Basis/recorded`` both
/// are booked by when storerecon first recorded them instead, so a closed period's figures never change. Amounts are
/// what the stores say they refunded (Apple's signed transaction, Google's Orders API; `source` `store`) or
/// estimates from configured prices (`source` `configured`, always grouped apart); each entry is rounded half to
/// even to the currency's minor unit and then added (see ``Money``), so every printed row foots (net = gross - tax)
/// and every printed total is the sum of its rows. Entries whose amount is unknown are counted under
/// `unknownAmount` and never summed as zero; Apple family-sharing revocations move no money and are counted under
/// `familyRevokes`.
public struct RefundReport: Sendable {
    /// One group.
    public struct Group: Sendable, Equatable {
        /// The grouping values, keyed by dimension name (`day`, `platform`, ...).
        public var keys: [String: String]
        /// Refunds booked in the group (a refund reversed later stays here).
        public var refunds: Int
        /// Units refunded, less the units of the reversals booked in the group.
        public var quantity: Int
        /// Sum of the known amounts (tax included) of the group's entries, reversals negative, each rounded to the
        /// minor unit of `keys["currency"]`, in nanos; `nil` when no entry of the group has a known amount.
        public var grossNanos: Decimal?
        /// Sum of the refunded tax likewise; `nil` unless the store stated the tax of every entry counted in
        /// `grossNanos` (Google Orders API; Apple states none).
        public var taxNanos: Decimal?
        /// Entries (refunds and reversals) whose amount is unknown: in no sum.
        public var unknownAmount: Int
        /// Apple family-sharing revocations: access removed, no money moved; never in `refunds` or the amounts.
        public var familyRevokes: Int = 0
        /// Of `refunds`: Google refunds made without revocation (seen in orders storerecon re-read, not in the
        /// voided list).
        public var notRevoked: Int = 0
        /// Reversals booked in the group (negative entries in the amounts).
        public var reversed: Int
        /// With `--basis recorded`: refunds whose amount changed after their month closed, the change booked in the
        /// group (``Entry/restated``): the old amount out, the new one in.
        public var restated: Int = 0
        /// With `--rates`: `grossNanos` converted to the rates' base currency, each day at that day's rate, rounded
        /// to the base currency's minor unit (nanos).
        public var convertedGrossNanos: Decimal? = nil
        /// With `--rates`: `taxNanos` converted likewise (`nil` when the tax is not known).
        public var convertedTaxNanos: Decimal? = nil

        /// `grossNanos - taxNanos`, when both are known.
        public var netNanos: Decimal? {
            guard let grossNanos, let taxNanos else { return nil }
            return grossNanos - taxNanos
        }
    }

    /// What an entry of the ledger is.
    public enum Entry: String, Sendable, CaseIterable {
        /// A refund, booked when it happened (or was recorded).
        case refund
        /// The reversal of a refund (Apple `REFUND_REVERSED`): a negative entry, booked when it happened.
        case reversal
        /// With `--basis recorded`: a refund's amount changed after its month closed (the store stated it late), in
        /// two entries booked when it changed: the old amount out (negative) and the new one in; no units.
        case restated
        /// The same for the refund's reversal, booked before the change: the old amount back, the new one out.
        case restatedReversal = "restated_reversal"
    }

    /// One entry (`--detail`).
    public struct Detail: Sendable, Equatable {
        /// A refund, or the reversal of one (its amounts and quantity negative).
        public var entry: Entry
        /// The time that books the entry (the report's basis), and its day in the report's zone.
        public var bookedAt: Date
        public var day: String
        public var refundedAt: Date
        /// When storerecon first recorded the entry.
        public var recordedAt: Date
        public var platform: RefundPlatform
        public var app: String
        public var orderId: String
        public var part: String
        public var originalId: String?
        public var product: String?
        public var reasonCode: Int?
        public var reason: String
        public var type: RefundKind
        /// Units refunded; negative on a reversal.
        public var quantity: Int
        public var percentageMilli: Int?
        /// The sale's own price (tax included) in `currency`, rounded to its minor unit, in nanos; `nil` when not
        /// known in that currency.
        public var priceNanos: Decimal?
        /// The refunded amount (tax included), rounded to the currency's minor unit, in nanos; negative on a
        /// reversal; `nil` when unknown or when no money moved.
        public var grossNanos: Decimal?
        /// The refunded tax likewise, when the store states it.
        public var taxNanos: Decimal?
        public var currency: String?
        /// The buyer's country (Google orders), ISO 3166-1 alpha-2.
        public var country: String?
        /// `store` (what the store said) or `configured` (estimated from configured prices); `nil` without amount.
        public var source: AmountSource?
        /// Why the amount is missing or provisional (`pending`, `order_not_found`, `family_revoke`, ...).
        public var note: AmountNote?
        public var reversedAt: Date?
        /// `production`, `sandbox`, `xcode` or `localtesting`.
        public var environment: String

        /// `grossNanos - taxNanos`, when both are known.
        public var netNanos: Decimal? {
            guard let grossNanos, let taxNanos else { return nil }
            return grossNanos - taxNanos
        }
    }

    /// One rate `--rates` supplied and the report used.
    public struct RateUsed: Sendable, Equatable {
        public var day: String
        public var currency: String
        public var rate: Decimal
    }

    /// What the Google figures can and cannot see, said beside every report.
    public static let googleCoverage =
        "Google: every refund Google revoked is seen (Voided Purchases); refunds without revocation only for orders "
        + "storerecon knows (subscriptions' current orders, orders read before), counted in not_revoked_refunds"

    /// Refunds per day per platform (the chart), with what the notes beside it count.
    public struct DailyPoint: Sendable, Equatable {
        public var day: String
        public var platform: String
        /// Refunds booked that day (not family revokes; reversals not subtracted).
        public var refunds: Int
        /// Entries whose amount is unknown, in no total.
        public var unknownAmount: Int = 0
        /// Entries with an amount but no stated tax (Apple; configured estimates): tax and net blank.
        public var taxUnstated: Int = 0
    }

    /// The request.
    public var options: RefundReportOptions
    /// Grouped rows (empty with `--detail`, whose rows are streamed).
    public var groups: [Group]
    /// Chart series.
    public var daily: [DailyPoint]
    /// With `--rates`: the rates used, by day and currency.
    public var ratesUsed: [RateUsed] = []
    /// When `--by` has no `platform`: the groups by platform, currency and source, of which the totals are made
    /// (``totalsByCurrency()``).
    public var platformParts: [Group] = []
    /// The money chart's series (HTML): refunded gross per day, platform and currency.
    public var dailyMoney: [MoneyPoint] = []

    /// Entries whose amount is unknown, over the whole report: in no total.
    public var unknownAmount: Int { daily.reduce(0) { $0 + $1.unknownAmount } }

    /// Runs the grouped report (with `--detail`, only the chart series; the rows are streamed by
    /// ``write(_:format:on:to:)``) in a read-only, repeatable-read transaction: every query sees the same snapshot
    /// and nothing is written.
    /// - Parameter money: also read the money chart's series (``dailyMoney``), for the HTML page.
    public static func run(
        _ options: RefundReportOptions, on connection: PostgresConnection, money: Bool = false
    ) throws -> RefundReport {
        try inSnapshot(options, on: connection) { try summary(options, on: connection, money: money) }
    }

    /// Checks the request, opens a read-only repeatable-read transaction, runs `body` in it and rolls back.
    /// - Throws: `ReportError` for a bad request or a time zone the database does not know.
    static func inSnapshot<T>(
        _ options: RefundReportOptions, on connection: PostgresConnection, _ body: () throws -> T
    ) throws -> T {
        try options.validate()
        try checkTimeZone(options.timeZone, on: connection)
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { _ = try? connection.execute("ROLLBACK") }
        return try body()
    }

    /// Checks that the database knows `timeZone` by that name (its days are cut there).
    /// - Throws: `ReportError` when it does not.
    public static func checkTimeZone(_ timeZone: String, on connection: PostgresConnection) throws {
        let zone = try connection.query("SELECT count(*) AS n FROM pg_timezone_names WHERE name = $1", [timeZone])
        guard try zone[0].decode("n", as: Int.self) > 0 else {
            throw ReportError("time zone \(timeZone) is unknown to the database", code: .configuration)
        }
    }

    /// The groups (unless `--detail`) and the chart series, inside the snapshot.
    static func summary(
        _ options: RefundReportOptions, on connection: PostgresConnection, money: Bool = false
    ) throws -> RefundReport {
        var report = RefundReport(options: options, groups: [], daily: [])
        let range = rangeParameters(options)
        if !options.detail {
            report.groups = try groups(options, by: options.by, on: connection)
            if !options.by.contains(.platform) {
                report.platformParts = try groups(options, by: options.platformPartsBy, on: connection)
            }
            if let rates = options.rates {
                try report.convert(with: rates, on: connection)
            }
        }
        report.daily = try connection.query(dailyQuery(options.basis), range).map { row in
            DailyPoint(
                day: try row.decode("day"), platform: try row.decode("platform"), refunds: try row.decode("refunds"),
                unknownAmount: try row.decode("unknown_amount"), taxUnstated: try row.decode("tax_unstated"))
        }
        if money { report.dailyMoney = try moneyPoints(options, on: connection) }
        return report
    }

    /// The entries grouped by `by`.
    static func groups(
        _ options: RefundReportOptions, by: [RefundReportOptions.Dimension], on connection: PostgresConnection
    ) throws -> [Group] {
        let flags = RefundReportOptions.Dimension.allCases.map { by.contains($0) }
        return try connection.query(
            groupQuery(options.basis), rangeParameters(options) + roundingParameters + flags
        ).map { row in
            var keys: [String: String] = [:]
            for dimension in by {
                keys[dimension.rawValue] = try row.decodeIfPresent(dimension.rawValue, as: String.self) ?? ""
            }
            return Group(
                keys: keys, refunds: try row.decode("refunds"), quantity: try row.decode("quantity"),
                grossNanos: try Self.nanos(row, "gross_nanos"), taxNanos: try Self.nanos(row, "tax_nanos"),
                unknownAmount: try row.decode("unknown_amount"), familyRevokes: try row.decode("family_revokes"),
                notRevoked: try row.decode("not_revoked"),
                reversed: try row.decode("reversed"), restated: try row.decode("restated"))
        }
    }

    /// Converts every group's amounts to `rates.base`: the groups are read again split by day (and currency), each
    /// day's sums (of entries already rounded) are multiplied by that day's rate exactly, and each group's result is
    /// rounded once to the base currency's minor unit, so the converted totals are sums of the printed rows.
    /// - Throws: `ReportError` (input) naming the first day and currency without a rate.
    mutating func convert(with rates: RefundRates, on connection: PostgresConnection) throws {
        var used: [String: RateUsed] = [:]
        groups = try converted(groups, by: options.by, with: rates, used: &used, on: connection)
        if !platformParts.isEmpty {
            platformParts = try converted(
                platformParts, by: options.platformPartsBy, with: rates, used: &used, on: connection)
        }
        ratesUsed = used.keys.sorted().compactMap { used[$0] }
    }

    /// `groups` (grouped `by`) with their converted amounts, the rates used added to `used`.
    func converted(
        _ groups: [Group], by: [RefundReportOptions.Dimension], with rates: RefundRates,
        used: inout [String: RateUsed], on connection: PostgresConnection
    ) throws -> [Group] {
        var groups = groups
        let flags = RefundReportOptions.Dimension.allCases.map { by.contains($0) || $0 == .day || $0 == .currency }
        func key(_ values: [String]) -> String { values.joined(separator: "\u{1}") }
        var index: [String: Int] = [:]
        for (position, group) in groups.enumerated() {
            index[key(by.map { group.keys[$0.rawValue] ?? "" })] = position
            groups[position].convertedGrossNanos = group.grossNanos == nil ? nil : 0
            groups[position].convertedTaxNanos = group.taxNanos == nil ? nil : 0
        }
        let parameters = Self.rangeParameters(options) + Self.roundingParameters + flags
        for row in try connection.query(Self.groupQuery(options.basis), parameters) {
            guard let gross = try Self.nanos(row, "gross_nanos") else { continue }
            let values = try by.map { try row.decodeIfPresent($0.rawValue, as: String.self) ?? "" }
            guard let position = index[key(values)] else { continue }
            let day: String = try row.decode("day")
            let currency: String = try row.decode("currency")
            let rate = try rates.rate(day: day, currency: currency)
            if currency != rates.base {
                used["\(day) \(currency)"] = RateUsed(day: day, currency: currency, rate: rate)
            }
            groups[position].convertedGrossNanos = (groups[position].convertedGrossNanos ?? 0) + gross * rate
            if let tax = try Self.nanos(row, "tax_nanos"), groups[position].convertedTaxNanos != nil {
                groups[position].convertedTaxNanos = (groups[position].convertedTaxNanos ?? 0) + tax * rate
            }
        }
        for position in groups.indices {
            groups[position].convertedGrossNanos = groups[position].convertedGrossNanos.map {
                Money.rounded(nanos: $0, currency: rates.base)
            }
            groups[position].convertedTaxNanos = groups[position].convertedTaxNanos.map {
                Money.rounded(nanos: $0, currency: rates.base)
            }
        }
        return groups
    }

    /// A `numeric` column of exact nanos.
    static func nanos(_ row: PostgresRow, _ column: String) throws -> Decimal? {
        guard let text = try row.decodeIfPresent(column, as: String.self) else { return nil }
        guard let value = Money.nanos(text: text) else {
            throw ReportError("unexpected amount \(text) in \(column)", code: .failed)
        }
        return value
    }
}
