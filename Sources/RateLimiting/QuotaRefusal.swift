/// Why a daily budget refuses a call; the raw values are what `quota_acquire` returns.
enum QuotaRefusal: String, Sendable {
    /// The store said the day's quota is spent.
    case storeExhausted = "store_exhausted"
    /// The cap is used up.
    case capReached = "cap_reached"
    /// Backfills used their share.
    case backfillShareReached = "backfill_share_reached"

    /// The reason text of the `QuotaError`.
    func reason(day: PacificDay, cap: Int?, backfillCap: Int?) -> String {
        let capText = cap.map(String.init) ?? "unlimited"
        switch self {
        case .storeExhausted:
            return "the store said the daily quota is spent (Pacific day \(day)); calls resume when the day turns"
        case .capReached:
            return "all \(capText) calls of Pacific day \(day) are used"
        case .backfillShareReached:
            let share = backfillCap.map(String.init) ?? "0"
            return "backfills used their \(share) of the \(capText) calls of Pacific day \(day); the rest is kept "
                + "for incremental syncs"
        }
    }
}
