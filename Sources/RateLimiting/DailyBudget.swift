/// The daily budget of one (app, API) on one US-Pacific day: a cap on calls, of which backfills may take only
/// their share, and the store's own "spent for today".
///
/// `.incremental` calls may use the whole cap; `.backfill` calls stop at `backfillCap`, so at least
/// `cap − backfillCap` calls always remain for the nightly sync. `PostgresQuotaGate` applies the same rules in
/// SQL (`quota_acquire`).
public struct DailyBudget: Sendable, Hashable {
    /// The day counted.
    public let day: PacificDay
    /// Calls allowed in the day, or `nil` for no cap.
    public let cap: Int?
    /// Calls backfills may take of the cap, or `nil` for no separate limit.
    public let backfillCap: Int?
    /// Calls granted.
    public private(set) var used = 0
    /// Calls granted to backfills.
    public private(set) var usedBackfill = 0
    /// Calls refused because the budget was spent.
    public private(set) var refused = 0
    /// Throttles the store reported.
    public private(set) var throttled = 0
    /// Whether the store said the day's quota is spent.
    public private(set) var storeExhausted = false

    /// Creates an unused budget.
    public init(day: PacificDay, cap: Int?, backfillCap: Int?) {
        self.day = day
        self.cap = cap
        self.backfillCap = backfillCap
    }

    /// Throws when a call for `purpose` is not allowed today, counting the refusal.
    /// - Throws: `QuotaError` naming the app, the API and why.
    public mutating func check(purpose: CallPurpose, app: String, api: StoreAPI) throws {
        if let refusal = refusal(for: purpose) {
            refused += 1
            throw QuotaError(app: app, api: api, reason: refusal.reason(day: day, cap: cap, backfillCap: backfillCap))
        }
    }

    /// Counts a granted call.
    public mutating func record(purpose: CallPurpose) {
        used += 1
        if purpose == .backfill { usedBackfill += 1 }
    }

    /// Counts a throttle the store reported.
    public mutating func recordThrottle() {
        throttled += 1
    }

    /// Marks the day's quota spent, as the store said.
    public mutating func markExhausted() {
        storeExhausted = true
    }

    /// Why a call for `purpose` would be refused, or `nil` when it is allowed.
    func refusal(for purpose: CallPurpose) -> QuotaRefusal? {
        if storeExhausted { return .storeExhausted }
        if let cap, used >= cap { return .capReached }
        if purpose == .backfill, let backfillCap, usedBackfill >= backfillCap { return .backfillShareReached }
        return nil
    }

    /// The budget as a status row.
    public func usage(api: StoreAPI) -> QuotaUsage {
        QuotaUsage(
            api: api, day: day.description, used: used, usedBackfill: usedBackfill, heldBack: refused,
            throttled: throttled, cap: cap, backfillCap: backfillCap,
            exhausted: storeExhausted || cap.map { used >= $0 } == true)
    }
}
