import Foundation

/// The vocabulary of the tie-out: how a ledger line compares with the store's financial report, and why. Every
/// report prints this legend (``TieOut/legend``); `docs/tie-out.md` explains it at length.
public enum TieOut {
    /// How one line compares.
    public enum Status: String, Sendable, Encodable, CaseIterable {
        /// Both sides agree to the minor unit.
        case matched
        /// Google: both sides have the order, with different amounts.
        case amountDiffers = "amount_differs"
        /// Google: refunded in the ledger this month, not in the month's report.
        case ledgerOnly = "ledger_only"
        /// Google: in the month's report, not refunded in the ledger this month.
        case reportOnly = "report_only"
        /// Apple: the units or amounts differ for the product, country and currency.
        case differs

        /// One line for the legend.
        public var meaning: String {
            switch self {
            case .matched: "both sides agree to the minor unit"
            case .amountDiffers: "Google: both sides have the order, with different amounts"
            case .ledgerOnly: "Google: refunded in the ledger this month, not in the month's report"
            case .reportOnly: "Google: in the month's report, not refunded in the ledger this month"
            case .differs: "Apple: units or amounts differ for the product, country and currency"
            }
        }
    }

    /// Why a line differs, where it can be named. The line's `note` says more (a month, a gap, a command).
    public enum Cause: String, Sendable, Encodable, CaseIterable {
        /// Google: refunded in one month (most often on its last days, US Pacific) and booked by Google in the next:
        /// `ledger_only` in the month it happened, `report_only` in the month Google booked it; the note names the
        /// other month.
        case settlementLag = "settlement_lag"
        /// Google: booked by Google before the ledger's history began (its first voided sync reached back 30 days,
        /// all Google keeps): the ledger cannot hold it. The note gives the day history began.
        case beforeHistory = "before_history"
        /// Google: booked inside a recorded sync gap: the note names the gap and the backfill that would fill it.
        case inGap = "in_gap"
        /// Google: a refund made without revocation, of an order storerecon never saw (not in the voided list, never
        /// read from the Orders API, or read before Google refunded it), in a time the ledger's sync covered: nothing
        /// is wrong with the sync.
        case notRevokedUnseen = "not_revoked_unseen"
        /// Google: the ledger refunded the order in another month (the note names it).
        case otherMonth = "other_month"
        /// Some of the ledger's refunds of the line have no amount (Google: the Orders API could not price them;
        /// Apple: a revocation storerecon cannot price); the line's ledger amount is the sum of the others.
        case unpriced
        /// Google: the ledger's amount is a configured price (`products.<id>`), an estimate made when the Orders API
        /// gave none; the store's own figure differs from it.
        case estimated
        /// Apple: the ledger's figure holds reversals, dated in this period, of refunds booked in an earlier one;
        /// Apple books no refund for them (a reversal is a sale to Apple), so the line differs by the reversals.
        case reversal
        /// Apple: refunds of this period reversed after it, before Apple's report: Apple booked neither; the line
        /// differs by them until the reversal's period is tied out, where the reversal offsets them.
        case reversedLater = "reversed_later"
        /// Apple: the units (and their money) the ledger has over the report are of its refunds of the period's last
        /// day (US Pacific), which Apple may book in the next period; or those the report has over the ledger are of
        /// the ledger's refunds of the previous period's last day, which Apple may have booked here.
        case periodEdge = "period_edge"
        /// Apple: the report counts the line's family-sharing revocations as refunded units (no money moved), which
        /// the ledger's figure does not; with them both sides agree.
        case familyRevoke = "family_revoke"

        /// One line for the legend.
        public var meaning: String {
            switch self {
            case .settlementLag:
                "Google: refunded in one month (most often on its last days, US Pacific), booked by Google in the next"
            case .beforeHistory: "Google: booked before the ledger's history began (Google keeps 30 days)"
            case .inGap: "Google: booked inside a recorded sync gap (the note names the gap and its backfill)"
            case .notRevokedUnseen:
                "Google: refunded without revocation, of an order storerecon never saw refunded; the sync covered "
                    + "that time"
            case .otherMonth: "Google: the ledger refunded the order in another month"
            case .unpriced:
                "some of the ledger's refunds have no amount (Google: the Orders API could not price them; Apple: a "
                    + "revocation storerecon cannot price): the line's ledger amount is the sum of the others"
            case .estimated: "Google: the ledger's amount is a configured estimate; the store's price differs"
            case .reversal: "Apple: reversals of earlier periods' refunds, which Apple books as sales, not refunds"
            case .reversedLater:
                "Apple: refunds reversed after the period, before Apple's report; cleared by the reversal's period"
            case .periodEdge:
                "Apple: the units and money apart are refunds of a period's last day (US Pacific), which Apple may "
                    + "book in the next period"
            case .familyRevoke: "Apple: the report counts family-sharing revocations (no money moved) as units"
            }
        }
    }

    /// Every status and cause with its meaning, in declaration order: the legend each format prints.
    public static var legend: [(kind: String, name: String, meaning: String)] {
        Status.allCases.map { ("status", $0.rawValue, $0.meaning) }
            + Cause.allCases.map { ("cause", $0.rawValue, $0.meaning) }
    }
}
