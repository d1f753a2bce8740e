/// One API's use of its daily budget on one US-Pacific day, for `storerecon status`.
public struct QuotaUsage: Sendable, Hashable, Codable {
    /// The API.
    public var api: StoreAPI
    /// The Pacific day counted.
    public var day: String
    /// Calls granted today, all purposes.
    public var used: Int
    /// Of `used`, calls granted to backfills.
    public var usedBackfill: Int
    /// Calls storerecon held back today because its own daily cap (or the backfill share) was spent: never sent.
    public var heldBack: Int
    /// Times a store throttled this API today (429 or a quota answer).
    public var throttled: Int
    /// The daily cap, or `nil` when the API has none.
    public var cap: Int?
    /// The calls backfills may take of the cap, or `nil` when the API has no cap.
    public var backfillCap: Int?
    /// Whether no more calls are allowed today: the cap is used up, or the store said the day's quota is spent.
    public var exhausted: Bool

    /// Creates a usage row.
    public init(
        api: StoreAPI, day: String, used: Int, usedBackfill: Int, heldBack: Int, throttled: Int, cap: Int?,
        backfillCap: Int?, exhausted: Bool
    ) {
        self.api = api
        self.day = day
        self.used = used
        self.usedBackfill = usedBackfill
        self.heldBack = heldBack
        self.throttled = throttled
        self.cap = cap
        self.backfillCap = backfillCap
        self.exhausted = exhausted
    }

    /// Calls left today for incremental work, or `nil` when there is no cap.
    public var remaining: Int? {
        if exhausted { return 0 }
        return cap.map { max(0, $0 - used) }
    }
}
