import Foundation
import Postgres
import StoreCalendar

/// The month's refunds tied out against the stores' financial reports: Google per order, Apple per product x
/// country x currency over the report's own period. The ledger's side of each store is the refund report's figure for
/// the month as that store books it (``StorePeriods``). Read from one snapshot; never writes.
///
/// Amounts are exact nanos, compared and printed in the currency's minor unit (half to even), positive for money
/// given back. `difference` is ledger minus report.
public struct TieOutReport: Sendable {
    /// One compared line: a Google order, or an Apple product x country x currency.
    public struct Line: Sendable, Equatable {
        public var store: String
        public var app: String
        public var currency: String
        /// Google orderId (empty for Apple).
        public var orderId: String
        public var product: String
        public var country: String
        /// Refunds in the ledger (Apple: units, a prorated refund one unit, reversals negative).
        public var ledgerRefunds: Int
        /// Refunded money in the ledger (Google net of tax, Apple customer price), nanos; `nil` when unknown.
        public var ledgerNanos: Int64?
        /// Refund rows (Google `Charge refund`) or units (Apple `R` quantity, negated) in the report.
        public var reportRefunds: Int
        /// Refunded money in the report (Google `Charge refund` negated, Apple units x customer price), nanos.
        public var reportNanos: Int64?
        public var status: TieOut.Status
        public var cause: TieOut.Cause?
        /// What the cause points at: the other month, the gap and its backfill, the reversal's day.
        public var note: String
    }

    /// Totals of one store and currency.
    public struct Total: Sendable, Equatable {
        public var store: String
        public var currency: String
        public var lines: Int
        public var matched: Int
        public var differing: Int
        /// Sum of the lines' rounded ledger amounts (unknown ones left out).
        public var ledgerNanos: Decimal
        /// Sum of the lines' rounded report amounts.
        public var reportNanos: Decimal
    }

    /// Totals of one store, currency, status and cause.
    public struct CauseTotal: Sendable, Equatable {
        /// `google` or `apple`.
        public var store: String
        /// The lines' currency (ISO 4217).
        public var currency: String
        /// The lines' status.
        public var status: TieOut.Status
        /// The lines' cause (`nil`: none named).
        public var cause: TieOut.Cause?
        /// How many lines.
        public var lines: Int
        /// Sum of the lines' rounded ledger amounts (unknown ones left out).
        public var ledgerNanos: Decimal
        /// Sum of the lines' rounded report amounts.
        public var reportNanos: Decimal
    }

    /// What the month's refunds cost in payouts, in the merchant currency the report carries: Google `Charge
    /// refund` + `Google fee refund` + `Tax refund`, Apple's negative Extended Partner Share; positive for money
    /// the developer did not get.
    public struct PayoutCost: Sendable, Equatable {
        public var store: String
        public var app: String
        /// The merchant currency (Google Merchant Currency, Apple Partner Share Currency).
        public var currency: String
        public var nanos: Decimal
    }

    /// A report the tie-out used.
    public struct SourceReport: Sendable, Encodable, Equatable {
        public var store: String
        public var app: String
        public var periodStart: String
        public var periodEnd: String
        public var sourceName: String
        public var rows: Int
    }

    /// The month tied out.
    public var month: CalendarMonth
    /// Whether every line is printed (`--detail`).
    public var detail: Bool
    /// The lines kept: all of them from ``run(month:apps:detail:on:)``; those not matched when streamed to HTML.
    public var lines: [Line] = []
    /// Totals per store and currency.
    public var totals: [Total] = []
    /// Totals per store, currency, status and cause.
    public var causeTotals: [CauseTotal] = []
    /// Refunds' cost in payouts per store, app and merchant currency.
    public var payoutCosts: [PayoutCost] = []
    /// The reports used.
    public var reports: [SourceReport] = []
    /// Apps with no report loaded for the month (`sync payouts` or `import payouts` first).
    public var missingReports: [String] = []
    /// How many lines were compared.
    public var lineCount = 0
    /// How many lines are not `matched`.
    public var differing = 0
    /// How many of those name no cause: the ones to look into and raise.
    public var withoutCause = 0

    /// The counts in words, as every format and the command's log print them.
    public var counts: String {
        "\(lineCount) lines, \(differing) not matched, \(withoutCause) without a cause"
    }

    /// Creates an empty report of `month`.
    public init(month: CalendarMonth, detail: Bool) {
        self.month = month
        self.detail = detail
    }

    /// Runs the tie-out of `month` (`YYYY-MM`) for `apps` in one read-only snapshot, keeping every line.
    /// - Parameter apps: app id to `google` or `apple`, for the apps to tie out.
    /// - Throws: ``ReportError`` for a malformed month; `PostgresError`.
    public static func run(
        month: CalendarMonth, apps: [String: String], detail: Bool, on connection: PostgresConnection
    ) throws -> TieOutReport {
        var lines: [Line] = []
        var report = try scan(month: month, apps: apps, detail: detail, on: connection) { _, line in
            lines.append(line)
        }
        report.lines = lines
        return report
    }

    /// Whether two amounts agree in `currency`'s minor unit.
    static func agree(_ first: Int64, _ second: Int64, _ currency: String) -> Bool {
        TieOutAmount.rounded(first, currency) == TieOutAmount.rounded(second, currency)
    }
}
