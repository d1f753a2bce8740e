/// The amount rule of a refund row, for every path that writes one (a voided page, an order priced after or ahead,
/// the backlog, orders Google refused, Apple): a configured estimate stands in while the store states no amount; the
/// store's amount replaces an estimate; an estimate never replaces the store's amount. Pure: the statements of
/// ``RefundWriter`` take its decisions as SQL generated from ``decide(stored:offer:)`` (``decisionSQL(stored:offer:)``),
/// so the rule is written here once.
public enum RefundAmountRule {
    /// What a write offers a refund row's amount.
    public enum Offer: String, Sendable, CaseIterable {
        /// The store's own statement: an amount (Orders API refund details, Apple's signed price) or that it has
        /// none (a refund without revocation still pending, an Apple family revoke).
        case stated
        /// The store's figures of the order are impossible: none of its refunds keeps an amount (note
        /// `over_refunded`, the order is in the quarantine).
        case overRefunded = "over_refunded"
        /// What stands in while the store states nothing: the configured estimate, or no amount with a note.
        case estimate
        /// A Google voided row: it says nothing of the amount, so it fills only what the row lacks.
        case voidedRow = "voided_row"
    }

    /// What becomes of a stored amount when another is offered.
    public enum Decision: String, Sendable, CaseIterable {
        /// The offered amount is written.
        case replace
        /// The stored amount stays.
        case keep
        /// Each column the row lacks takes the offered value.
        case fillMissing = "fill_missing"
    }

    /// The decision for a row whose amount came from `stored` (`nil`: none yet, or a new row).
    public static func decide(stored: AmountSource?, offer: Offer) -> Decision {
        switch offer {
        case .stated, .overRefunded: .replace
        case .estimate: stored == .store ? .keep : .replace
        case .voidedRow: stored == .store ? .keep : .fillMissing
        }
    }

    /// What an upserted record offers: a Google row of the voided list (revoked) says nothing the Orders API did
    /// not, unless it carries the store's amount (priced ahead from its order); every other record is the store's
    /// statement.
    public static func offer(platform: RefundPlatform, revoked: Bool, storeAmount: Bool = false) -> Offer {
        platform == .google && revoked && !storeAmount ? .voidedRow : .stated
    }

    /// What an Orders API answer offers one revoked row: the store's amount when the order states one, nothing when
    /// its figures are impossible, else the estimate.
    static func offer(of price: GoogleOrderPricing.PartPrice) -> Offer {
        if price.gross != nil { return .stated }
        return price.note == .overRefunded ? .overRefunded : .estimate
    }

    /// An SQL expression giving ``Decision``'s raw value for `stored` (an SQL `amount_source` expression) and `offer`
    /// (an SQL expression of an ``Offer`` raw value), generated from ``decide(stored:offer:)`` case by case.
    static func decisionSQL(stored: String, offer: String) -> String {
        let whens = Offer.allCases.map { offered in
            "WHEN '\(offered.rawValue)' THEN \(decisionSQL(stored: stored, fixed: offered))"
        }
        return "CASE \(offer) \(whens.joined(separator: " ")) END"
    }

    /// ``decisionSQL(stored:offer:)`` for one known offer.
    static func decisionSQL(stored: String, fixed offer: Offer) -> String {
        let store = decide(stored: .store, offer: offer)
        let other = decide(stored: nil, offer: offer)
        precondition(decide(stored: .configured, offer: offer) == other, "an estimate and none weigh the same")
        guard store != other else { return "'\(store.rawValue)'" }
        return "CASE WHEN \(stored) = '\(AmountSource.store.rawValue)' THEN '\(store.rawValue)' "
            + "ELSE '\(other.rawValue)' END"
    }

    /// An SQL expression giving the ``Offer`` raw value of an upserted row from its `platform`, `revoked` and
    /// `source` (SQL expressions; `source` the row's `amount_source`), generated from
    /// ``offer(platform:revoked:storeAmount:)``.
    static func offerSQL(platform: String, revoked: String, source: String) -> String {
        let whens = RefundPlatform.allCases.flatMap { store in
            [true, false].flatMap { flag in
                [true, false].map { stated in
                    "WHEN \(platform) = '\(store.rawValue)' AND \(revoked) = \(flag) "
                        + "AND (\(source) IS NOT DISTINCT FROM '\(AmountSource.store.rawValue)') = \(stated) "
                        + "THEN '\(offer(platform: store, revoked: flag, storeAmount: stated).rawValue)'"
                }
            }
        }
        return "CASE \(whens.joined(separator: " ")) END"
    }

    /// An amount column as a statement writes it under `decision` (an SQL expression of a ``Decision`` raw value):
    /// the stored `stored`, the offered `offered`, or the stored one unless missing.
    static func columnSQL(decision: String, stored: String, offered: String) -> String {
        "CASE \(decision) WHEN '\(Decision.keep.rawValue)' THEN \(stored) "
            + "WHEN '\(Decision.fillMissing.rawValue)' THEN coalesce(\(stored), \(offered)) ELSE \(offered) END"
    }

    /// The precision of a configured estimate (prices are configured in milliunits).
    static let estimatePrecision = 3
}
