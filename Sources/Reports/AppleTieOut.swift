import Foundation
import Ledger
import Postgres
import StoreCalendar

/// Apple's tie-out of one app over one FINANCIAL report's own period (Apple's fiscal month, from the rows' Start and
/// End Date), per product x country x currency: the ledger's figure (the refund report's entries of the period:
/// refunds dated in it, less reversals dated in it) against the report's `R` rows. Apple's rows are aggregates
/// without transaction ids, so nothing finer can be matched.
///
/// Apple books a refund in the period of its date unless it is reversed before the report; a reversal is a sale to
/// Apple, never an `R` row. So a line can differ by reversals only: those dated here of earlier refunds (`reversal`),
/// and this period's refunds reversed after it but before Apple's report (`reversed_later`), which the reversal's own
/// period offsets.
struct AppleTieOut {
    let app: String
    let periods: StorePeriods
    let connection: PostgresConnection

    /// One key's side in the ledger.
    struct LedgerSide: Equatable {
        /// Units (a prorated refund one unit), reversals negative.
        var units = 0
        var nanos: Int64 = 0
        /// Entries without an amount, but those a reversal of the period cancels.
        var unknown = 0
        /// Entries with an amount (of `nanos`).
        var known = 0
        /// Of `units`/`nanos`: refunds dated on the period's last day (US Pacific), which Apple may book in the next
        /// one.
        var lastDay = EdgeDay()
        var familyRevokes = 0
        /// Of `units`/`nanos`: refunds of the period reversed after it.
        var laterUnits = 0
        var laterNanos: Int64 = 0
        /// Reversals dated in the period of refunds dated before it (positive).
        var reversalUnits = 0
        var reversalNanos: Int64 = 0
        /// The first day (US Pacific) a refund of the period was reversed after it.
        var laterDay: String?
        /// Of `unknown`: the refunds reversed after the period, and the reversals of earlier refunds.
        var laterUnknown = 0
        var reversalUnknown = 0
    }

    /// A key's refunds of one edge day (those not reversed in the period): units, the known money, the refunds
    /// without an amount, and the money of one unit when every priced unit of the day refunded the same amount (then,
    /// with none unpriced, any number of them can be told apart by money; otherwise only all of them).
    struct EdgeDay: Equatable {
        var units = 0
        var nanos: Int64 = 0
        var unitNanos: Int64?
        var unknown = 0

        /// The known money of `count` of the day's units and how many refunds without an amount go with them; nil
        /// when it cannot be known.
        func share(of count: Int) -> (nanos: Int64, unknown: Int)? {
            if count == units { return (nanos, unknown) }
            guard unknown == 0, let unitNanos else { return nil }
            return (Int64(count) * unitNanos, 0)
        }
    }

    /// One key's side in the report.
    struct ReportSide: Equatable {
        var units: Int
        var nanos: Int64
    }

    /// The period's last day and the previous period's, with the previous last day's refunds per key: Apple may book
    /// a period's last-day refunds in the next period.
    struct Edges: Equatable {
        var lastDay: String
        var previousLastDay: String
        var previousLastDays: [String: EdgeDay] = [:]
    }

    func lines() throws -> [TieOutReport.Line] {
        let ledger = try ledgerSides(periods)
        let report = try reportSides()
        let edges = try self.edges()
        return Set(ledger.keys).union(report.keys).sorted().compactMap { key in
            Self.compare(key: key, ledger: ledger[key], report: report[key], app: app, edges: edges)
        }
    }

    /// The period's edges, the previous period's last day read from the ledger as a one-day Apple period.
    func edges() throws -> Edges? {
        guard let apple = periods.apple, let first = CivilDate(iso: apple.first) else { return nil }
        let previous = first.adding(days: -1).description
        let sides = try ledgerSides(StorePeriods(month: periods.month, apple: (previous, previous)))
        // A refund of that day reversed since (a `later` one of the one-day period) is no refund Apple booked here.
        return Edges(
            lastDay: apple.last, previousLastDay: previous,
            previousLastDays: sides.compactMapValues { side in
                var day = side.lastDay
                (day.units, day.nanos) = (day.units - side.laterUnits, day.nanos - side.laterNanos)
                day.unknown -= side.laterUnknown
                return day.units > 0 ? day : nil
            })
    }

    /// Compares one product x country x currency (`nil` when neither side moved money or units). A cause is named
    /// only when it accounts for the difference: the reversals (`reversal`, `reversed_later`) or the
    /// revocations (`family_revoke`) when leaving them out makes both sides agree, the period's edge when refunds of
    /// the day Apple may book next door account for the units and the money over, `unpriced` when the units agree and
    /// the unknown amounts can make up the money apart. A cause may take the line's unknown amounts away with it.
    static func compare(
        key: String, ledger: LedgerSide?, report: ReportSide?, app: String, edges: Edges? = nil
    ) -> TieOutReport.Line? {
        let parts = key.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
        let side = ledger ?? LedgerSide()
        guard side.units != 0 || side.nanos != 0 || side.unknown > 0 || side.laterUnits > 0 || report != nil else {
            return nil
        }
        let currency = parts[2]
        // The known amounts' sum, as `report refunds` adds them; blank only when none is known.
        let ledgerNanos = side.unknown > 0 && side.known == 0 ? nil : Int64?(side.nanos)
        let reported = report ?? ReportSide(units: 0, nanos: 0)
        func agrees(units: Int, nanos: Int64, unknown: Int? = nil) -> Bool {
            (unknown ?? side.unknown) == 0 && units == reported.units
                && TieOutReport.agree(nanos, reported.nanos, currency)
        }
        var line = TieOutReport.Line(
            store: "apple", app: app, currency: currency, orderId: "", product: parts[0], country: parts[1],
            ledgerRefunds: side.units, ledgerNanos: ledgerNanos, reportRefunds: reported.units,
            reportNanos: report?.nanos, status: .matched, cause: nil, note: "")
        if agrees(units: side.units, nanos: side.nanos) { return line }
        line.status = .differs
        let withoutReversals = (side.units + side.reversalUnits, side.nanos + side.reversalNanos)
        let over = side.units - reported.units
        let (lessLater, lessReversals) = (side.unknown - side.laterUnknown, side.unknown - side.reversalUnknown)
        if side.unknown > 0, over == 0, Self.unpricedCanCover(side, reported) {
            (line.cause, line.note) = (.unpriced, GoogleTieOut.unpricedNote(side.unknown))
        } else if side.reversalUnits > 0,
            agrees(units: withoutReversals.0, nanos: withoutReversals.1, unknown: lessReversals)
        {
            line.cause = .reversal
            line.note = "\(side.reversalUnits) reversed unit(s) of earlier periods' refunds, booked by Apple as sales"
        } else if side.laterUnits > 0,
            agrees(units: side.units - side.laterUnits, nanos: side.nanos - side.laterNanos, unknown: lessLater)
                || agrees(
                    units: withoutReversals.0 - side.laterUnits, nanos: withoutReversals.1 - side.laterNanos,
                    unknown: lessLater - side.reversalUnknown)
        {
            line.cause = .reversedLater
            line.note =
                "\(side.laterUnits) unit(s) reversed from \(side.laterDay ?? "?") before Apple's report; "
                + "the reversal's period offsets them"
        } else if let edges, let note = Self.edgeNote(key: key, side, over: over, edges: edges, agrees: agrees) {
            (line.cause, line.note) = (.periodEdge, note)
        } else if side.familyRevokes > 0, agrees(units: side.units + side.familyRevokes, nanos: side.nanos) {
            line.cause = .familyRevoke
            line.note = "\(side.familyRevokes) family-sharing revocation(s) counted by Apple as refunded units"
        } else {
            line.note = [
                side.unknown > 0 ? GoogleTieOut.unpricedNote(side.unknown) : nil,
                side.familyRevokes > 0 ? "\(side.familyRevokes) family-sharing revocation(s), no money moved" : nil,
            ].compactMap { $0 }.joined(separator: "; ")
        }
        return line
    }

    /// The `period_edge` note when refunds of an edge day account for the units `over` the report and their money:
    /// this period's last day when the ledger has more, the previous period's when the report has.
    static func edgeNote(
        key: String, _ side: LedgerSide, over: Int, edges: Edges, agrees: (Int, Int64, Int?) -> Bool
    ) -> String? {
        if over > 0, over <= side.lastDay.units, let moved = side.lastDay.share(of: over),
            agrees(side.units - over, side.nanos - moved.nanos, side.unknown - moved.unknown)
        {
            return "\(side.lastDay.units) unit(s) refunded on the period's last day, \(edges.lastDay)"
        }
        if over < 0, let previous = edges.previousLastDays[key], -over <= previous.units,
            let moved = previous.share(of: -over), moved.unknown == 0,
            agrees(side.units - over, side.nanos + moved.nanos, nil)
        {
            return "\(previous.units) unit(s) refunded on the previous period's last day, \(edges.previousLastDay)"
        }
        return nil
    }

    /// Whether a line's amounts without a figure can make up the money apart: the unpriced refunds add money (the
    /// report must have more than the ledger's known sum), the unpriced reversals take it away (less); both, either.
    static func unpricedCanCover(_ side: LedgerSide, _ reported: ReportSide) -> Bool {
        let refunds = side.unknown - side.reversalUnknown
        if side.reversalUnknown == 0 { return reported.nanos > side.nanos }
        if refunds == 0 { return reported.nanos < side.nanos }
        return true
    }

    static func key(_ product: String, _ country: String, _ currency: String) -> String {
        [product, country, currency].joined(separator: "\u{1}")
    }

    /// The ledger's figure per product x country x currency, from the refund report's entries of the period.
    func ledgerSides(_ periods: StorePeriods) throws -> [String: LedgerSide] {
        let options = RefundReportOptions.storeMonth(periods, apps: [app])
        let rows = try connection.query(
            Self.ledgerQuery, RefundReport.rangeParameters(options) + RefundReport.roundingParameters)
        var sides: [String: LedgerSide] = [:]
        for row in rows {
            let country: String = try row.decode("country")
            let key = Self.key(
                try row.decode("product"), CountryCode.alpha2(fromAlpha3: country) ?? country,
                try row.decode("currency"))
            var side = sides[key] ?? LedgerSide()
            side.units += try row.decode("units", as: Int.self)
            side.nanos += try TieOutAmount.column(row, "nanos") ?? 0
            side.unknown += try row.decode("unknown", as: Int.self)
            side.known += try row.decode("known", as: Int.self)
            side.lastDay = try Self.lastDay(side.lastDay, row)
            side.familyRevokes += try row.decode("family_revokes", as: Int.self)
            side.laterUnits += try row.decode("later_units", as: Int.self)
            side.laterNanos += try TieOutAmount.column(row, "later_nanos") ?? 0
            side.reversalUnits += try row.decode("reversal_units", as: Int.self)
            side.reversalNanos += try TieOutAmount.column(row, "reversal_nanos") ?? 0
            side.laterUnknown += try row.decode("later_unknown", as: Int.self)
            side.reversalUnknown += try row.decode("reversal_unknown", as: Int.self)
            let day: String? = try row.decodeIfPresent("later_day")
            if let day, side.laterDay.map({ day < $0 }) ?? true { side.laterDay = day }
            sides[key] = side
        }
        return sides
    }

    /// `day` with a row's last-day refunds added: one unit's money is known while every row's units refunded the same.
    static func lastDay(_ day: EdgeDay, _ row: PostgresRow) throws -> EdgeDay {
        let units = try row.decode("last_day_units", as: Int.self)
        guard units > 0 else { return day }
        let unit = try TieOutAmount.column(row, "last_day_unit_nanos")
        return EdgeDay(
            units: day.units + units, nanos: day.nanos + (try TieOutAmount.column(row, "last_day_nanos") ?? 0),
            unitNanos: day.units == 0 || day.unitNanos == unit ? unit : nil,
            unknown: day.unknown + (try row.decode("last_day_unknown", as: Int.self)))
    }

    /// The report's `R` rows per product x country x customer currency: units (negated) and units x price.
    func reportSides() throws -> [String: ReportSide] {
        let rows = try connection.query(
            """
            SELECT coalesce(r.product_id, '') AS product, coalesce(r.country, '') AS country,
                   r.amount_currency AS currency, (-sum(r.quantity))::int AS units,
                   sum(abs(r.quantity)::numeric * abs(r.amount_nanos))::text AS nanos
            FROM payout_report p JOIN payout_report_row r ON r.report_id = p.id
            WHERE p.app_id = $1 AND p.store = 'apple' AND p.month = $2 AND r.kind = 'R'
            GROUP BY 1, 2, 3
            """, [app, periods.month])
        var sides: [String: ReportSide] = [:]
        for row in rows {
            let key = Self.key(try row.decode("product"), try row.decode("country"), try row.decode("currency"))
            sides[key] = ReportSide(
                units: try row.decode("units"), nanos: try TieOutAmount.column(row, "nanos") ?? 0)
        }
        return sides
    }
}
