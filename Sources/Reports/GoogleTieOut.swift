import Foundation
import Postgres
import StoreCalendar

/// Google's tie-out of one app and month, per order: the ledger's refunds of the US-Pacific month (the refund
/// report's own entries, net of tax) against the earnings report's `Charge refund` rows of the order, negated.
///
/// The database joins the two sides by order and returns them ordered by order id through a cursor, so memory stays
/// flat however many orders the month holds. A refund is on the ledger side of the month it happened only: a refund
/// of the month's last day that Google booked in the next month is `ledger_only` here and `report_only` there, both
/// `settlement_lag`, each naming the other month.
struct GoogleTieOut {
    let app: String
    let periods: StorePeriods
    let context: Context
    let connection: PostgresConnection

    /// What the causes of report-only lines depend on: where the ledger's history begins, and its recorded gaps.
    struct Context: Sendable {
        /// The earliest time a void can have been fetched: the first voided sync's start less Google's 30 days
        /// (`nil`: no voided sync has run, so the ledger has no Google history yet).
        var historyStart: Date?
        /// The app's recorded gaps of the voided sync.
        var gaps: [Gap]
        /// Whether Google's report of the next month is loaded: then a last-day refund it does not hold was not
        /// booked late.
        var nextMonthLoaded = false
    }

    /// A recorded `sync_gap`.
    struct Gap: Sendable, Equatable {
        var id: Int64
        var from: Date
        var to: Date
    }

    /// One order's two sides as the database joined them.
    struct Sides: Sendable {
        var order: String
        var inLedger = false
        var product = ""
        var country = ""
        var currency = ""
        /// Each side's own currency ("" when the side is absent).
        var ledgerCurrency = ""
        var reportCurrency = ""
        var refunds = 0
        var reversed = false
        /// Some of the ledger's amount is a configured estimate, not the store's price.
        var estimated = false
        /// The sum of the ledger's known amounts (`nil` when none is known), as `report refunds` adds them.
        var nanos: Int64?
        /// The ledger's entries without an amount (in no sum).
        var unknown = 0
        var lastDayNanos: Int64 = 0
        var lastDay = false
        var bookedLater = false
        /// What the next month's report refunds of the order (when it holds the order).
        var laterNanos: Int64?
        /// The order's ledger refunds of the previous month's last day, which Google books in this month (0 when one
        /// of them has no amount).
        var previousNanos: Int64 = 0
        var inReport = false
        var reportRows = 0
        var reportNanos: Int64 = 0
        var bookedAt: Date?
        /// Report-only orders: the latest day (US Pacific) the ledger refunded the order, in any month.
        var ledgerDay: String?
        /// Report-only orders: whether storerecon read the order from the Orders API.
        var known = false
        /// Report-only orders: when storerecon last read the order and Google had not refunded it yet.
        var readUnrefundedAt: Date?
    }

    /// Calls `body` with every line, in order id order.
    func scan(_ body: (TieOutReport.Line) throws -> Void) throws {
        var wider = periods
        wider.google.first = periods.month.previous.lastDay.description
        let options = RefundReportOptions.storeMonth(wider, apps: [app])
        try connection.execute(
            "DECLARE tieout_google NO SCROLL CURSOR FOR \(Self.query)",
            RefundReport.rangeParameters(options) + RefundReport.roundingParameters + [
                app, periods.month, periods.month.next, periods.google.last, periods.google.first,
            ])
        while true {
            let rows = try connection.query("FETCH FORWARD \(Self.fetchSize) FROM tieout_google")
            for row in rows {
                for line in lines(try Self.sides(row)) { try body(line) }
            }
            if rows.count < Self.fetchSize { break }
        }
        try connection.execute("CLOSE tieout_google")
    }

    static let fetchSize = 5000

    /// Compares one order's two sides (`nil` when neither side has a standing refund or a report row).
    func compare(_ sides: Sides) -> TieOutReport.Line? {
        // A refund that moved nothing (a void after parts had refunded every unit) has nothing to tie out.
        let standing = sides.inLedger && sides.refunds > 0 && (sides.nanos != 0 || sides.unknown > 0)
        guard standing || sides.inReport else { return nil }
        var line = TieOutReport.Line(
            store: "google", app: app, currency: sides.currency, orderId: sides.order, product: sides.product,
            country: sides.country, ledgerRefunds: sides.refunds, ledgerNanos: standing ? sides.nanos : 0,
            reportRefunds: sides.reportRows, reportNanos: sides.inReport ? sides.reportNanos : nil, status: .matched,
            cause: nil, note: "")
        if sides.inReport, standing {
            guard sides.unknown == 0, let nanos = sides.nanos else {
                // Refunds without an amount only add money: they can make up the difference only when the report
                // has more than the ledger's known sum.
                let known = sides.nanos ?? 0
                let covers = sides.reportNanos > known && !TieOutReport.agree(known, sides.reportNanos, sides.currency)
                (line.status, line.note) = (.amountDiffers, Self.unpricedNote(sides.unknown))
                line.cause = covers ? .unpriced : nil
                return line
            }
            if !TieOutReport.agree(nanos, sides.reportNanos, sides.currency) {
                line.status = .amountDiffers
                if let note = lagNote(sides, nanos: nanos) {
                    (line.cause, line.note) = (.settlementLag, note)
                } else if sides.estimated {
                    (line.cause, line.note) = (.estimated, Self.estimatedNote)
                }
            }
        } else if standing {
            line.status = .ledgerOnly
            (line.cause, line.note) = ledgerOnlyCause(sides)
        } else {
            line.status = .reportOnly
            (line.cause, line.note) = Self.reportOnlyCause(sides, month: periods.month, context: context, app: app)
        }
        return line
    }

    /// Why the ledger refunded an order this month that Google's report does not hold. Google books a refund in the
    /// month it processes it: most often the next for one of a month's last days (when all the order's refunds of
    /// the month are of its last day), but the next month's report refunding the order exactly as much says so
    /// whatever the day. Refunds without an amount cannot explain a refund the report lacks: they name no cause.
    private func ledgerOnlyCause(_ sides: Sides) -> (TieOut.Cause?, String) {
        let next = periods.month.next
        let lastDayOnly = sides.lastDay && sides.nanos.map { $0 == sides.lastDayNanos } ?? true
        if lastDayOnly || bookedWhole(sides), let booked = bookedNote(sides) { return (.settlementLag, booked) }
        if sides.lastDay, bookedNote(sides) == nil { return (nil, "not in Google's \(next) report either") }
        if sides.lastDay {
            return (nil, "Google's \(next) report refunds the order, not as much as the ledger did this month")
        }
        return (nil, sides.unknown > 0 ? Self.unpricedNote(sides.unknown) : "")
    }

    /// The note of a line some of whose ledger refunds have no amount.
    static func unpricedNote(_ unknown: Int) -> String {
        "\(unknown) of the ledger's refunds without an amount, in no sum"
    }

    static let estimatedNote =
        "the ledger's amount is a configured estimate: `backfill google-orders` once the Orders API answers"

    /// Why an order's amounts differ by refunds of a month's last day, when they do: this month's last-day refunds,
    /// which Google books next month, or the previous month's, which it books in this one (or both); else `nil`.
    private func lagNote(_ sides: Sides, nanos: Int64) -> String? {
        // A last-day refund that the next month's loaded report does not hold was not booked late.
        let later = bookedNote(sides) == nil ? 0 : sides.lastDayNanos
        let earlier = sides.previousNanos
        for (out, into) in [(later, 0), (0, earlier), (later, earlier)] where out != 0 || into != 0 {
            guard TieOutReport.agree(nanos - out + into, sides.reportNanos, sides.currency) else { continue }
            let previous = periods.month.previous
            return [
                out != 0 ? bookedNote(sides) : nil,
                into != 0 ? "the report holds the \(previous.lastDay) refund, in the ledger of \(previous)" : nil,
            ].compactMap { $0 }.joined(separator: "; ")
        }
        return nil
    }

    /// Whether the next month's report refunds the order exactly what the ledger refunded of it this month.
    private func bookedWhole(_ sides: Sides) -> Bool {
        guard sides.bookedLater, sides.unknown == 0, let nanos = sides.nanos, let later = sides.laterNanos else {
            return false
        }
        return TieOutReport.agree(nanos, later, sides.currency)
    }

    /// Where the rest of a last-day refund went: booked in the next month's report, or expected there while that
    /// report is not loaded; `nil` when it is loaded without the order.
    private func bookedNote(_ sides: Sides) -> String? {
        let next = periods.month.next
        if sides.bookedLater { return "booked by Google in \(next)" }
        return context.nextMonthLoaded ? nil : "expected in Google's \(next) report"
    }

    /// Why the report has an order the ledger did not refund in `month`, in this order: the ledger refunded as much on
    /// the previous month's last day (settlement lag, whatever the order's later refunds); the ledger refunded it in
    /// another month (its latest day; the previous month's last day: settlement lag; another day: another month, to
    /// compare with that month's line, which says `booked by Google in` this month when the amounts agree); Google
    /// booked it before the ledger's history began; inside a recorded gap; storerecon read the order and saw no
    /// refund (no cause); else a refund made without revocation that storerecon could not see.
    static func reportOnlyCause(
        _ sides: Sides, month: CalendarMonth, context: Context, app: String
    ) -> (TieOut.Cause?, String) {
        let previousLastDay = month.previous.lastDay.description
        if sides.previousNanos != 0, TieOutReport.agree(sides.previousNanos, sides.reportNanos, sides.currency) {
            return (.settlementLag, "in the ledger of \(month.previous)")
        }
        if let day = sides.ledgerDay {
            let month = String(day.prefix(7))
            return (day == previousLastDay ? .settlementLag : .otherMonth, "in the ledger of \(month)")
        }
        if let booked = sides.bookedAt {
            guard let start = context.historyStart, booked >= start else {
                let since = context.historyStart.map { "history begins \(Self.text($0))" } ?? "no voided sync has run"
                return (.beforeHistory, since)
            }
            if let gap = context.gaps.first(where: { $0.from <= booked && booked <= $0.to }) {
                return (.inGap, gapNote(gap, app: app))
            }
        }
        guard sides.known else { return (.notRevokedUnseen, "") }
        // Read while Google had not refunded it, before the report booked the refund: refunded without revocation
        // since, which the nightly re-read of known orders records.
        if let read = sides.readUnrefundedAt, let booked = sides.bookedAt, read < booked {
            return (
                .notRevokedUnseen,
                "storerecon last read the order on \(Self.text(read).prefix(10)), before Google refunded it; "
                    + "the nightly google_orders job reads it again"
            )
        }
        return (nil, "storerecon read the order; no refund was recorded")
    }

    /// The gap's id and the command that would fill it while Google still keeps its days.
    static func gapNote(_ gap: Gap, app: String) -> String {
        "gap \(gap.id): storerecon backfill google-voided --since \(text(gap.from)) --until \(text(gap.to)) "
            + "--app \(app) (or storerecon gaps acknowledge \(gap.id))"
    }

    static func text(_ date: Date) -> String {
        ISO8601DateFormatter.string(
            from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: .withInternetDateTime)
    }

    static func sides(_ row: PostgresRow) throws -> Sides {
        var sides = Sides(order: try row.decode("order_id"))
        sides.inLedger = try row.decode("in_ledger")
        sides.inReport = try row.decode("in_report")
        func either(_ column: String) throws -> String {
            let ledger = try row.decodeIfPresent("l_" + column, as: String.self) ?? ""
            if !ledger.isEmpty { return ledger }
            return try row.decodeIfPresent("t_" + column) ?? ""
        }
        sides.product = try either("product")
        sides.country = try either("country")
        sides.currency = try either("currency")
        sides.ledgerCurrency = try row.decodeIfPresent("l_currency") ?? ""
        sides.reportCurrency = try row.decodeIfPresent("t_currency") ?? ""
        if sides.inLedger {
            sides.refunds = try row.decode("refunds")
            sides.reversed = try row.decode("reversed")
            sides.estimated = try row.decode("estimated")
            sides.nanos = try TieOutAmount.column(row, "nanos")
            sides.unknown = try row.decode("unknown", as: Int.self)
            sides.lastDayNanos = try TieOutAmount.column(row, "last_day_nanos") ?? 0
            sides.lastDay = try row.decode("last_day")
            sides.bookedLater = try row.decode("booked_later")
            sides.laterNanos = try TieOutAmount.column(row, "later_nanos")
        }
        if sides.inReport {
            sides.reportRows = try row.decode("n")
            sides.reportNanos = try TieOutAmount.column(row, "report_nanos") ?? 0
            sides.bookedAt = try row.decodeIfPresent("booked_at")
        }
        sides.previousNanos =
            try TieOutAmount.column(row, "previous_nanos") ?? 0
        sides.ledgerDay = try row.decodeIfPresent("ledger_day")
        sides.known = try row.decodeIfPresent("known") ?? false
        sides.readUnrefundedAt = try row.decodeIfPresent("read_unrefunded_at")
        return sides
    }
}
