import Foundation

/// The vocabulary of the tie-out: how a ledger line compares with the store's financial report, and why.
public enum TieOut {
    /// How one line compares.
    public enum Status: String, Sendable, Encodable, CaseIterable {
        /// Google: the order's refunds and the report's `Charge refund` rows agree to the minor unit; Apple: refunds
        /// and amount agree for the product, country and currency.
        case matched
        /// Google: both sides have the order, with different amounts.
        case amountDiffers = "amount_differs"
        /// Google: refunded in the ledger, not in the month's report.
        case ledgerOnly = "ledger_only"
        /// Google: in the month's report, not refunded in the ledger that month.
        case reportOnly = "report_only"
        /// Apple: the counts or amounts differ for the product, country and currency.
        case differs
    }

    /// Why a line differs (or matched late), where it can be named.
    public enum Cause: String, Sendable, Encodable, CaseIterable {
        /// Google: refunded on the month's last day (US Pacific) and booked by Google in the next month; it matches
        /// in the next month's tie-out (where it shows as matched with this cause).
        case settlementLag = "settlement_lag"
        /// Google: a refund made without revocation, of an order storerecon never saw (not in the voided list, never
        /// read from the Orders API).
        case notRevokedUnseen = "not_revoked_unseen"
        /// The ledger has a refund of it that was reversed: Apple does not book a refund reversed before the report.
        case reversal
        /// Google: the ledger has the refund but the Orders API could not price it (amount unknown).
        case unpriced
        /// Apple: a ledger refund of the line is dated on (or a day beyond) an edge of the report's period, so
        /// Apple may have booked it in the neighbouring period.
        case periodEdge = "period_edge"
        /// Apple: the ledger has family-sharing revocations for the line (no money moved; not counted).
        case familyRevoke = "family_revoke"
        /// Google: the ledger refunded the order in another month.
        case otherMonth = "other_month"
    }
}
