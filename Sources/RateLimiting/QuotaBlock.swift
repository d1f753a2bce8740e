import Foundation

/// Something that stops every process from calling an (app, API) until a time: a store's throttling answer, the
/// store's "per day" answer, or the configured daily cap reached. `storerecon status` lists them and
/// `storerecon quota clear` lifts the first two.
public struct QuotaBlock: Codable, Sendable, Equatable {
    /// What set the block.
    public enum Kind: String, Codable, Sendable {
        /// The store throttled calls (`quota_bucket.blocked_until`).
        case throttled
        /// The store said the day's quota is spent (`quota_day.exhausted_at`): until the Pacific day turns.
        case storeExhausted = "store_exhausted"
        /// The configured daily cap is used up: until the Pacific day turns, or the cap is raised.
        case capReached = "cap_reached"
    }

    /// The API.
    public var api: StoreAPI
    /// What set it.
    public var kind: Kind
    /// No call before this (database time).
    public var until: Date
    /// Why, in words.
    public var reason: String

    /// Creates a block.
    public init(api: StoreAPI, kind: Kind, until: Date, reason: String) {
        self.api = api
        self.kind = kind
        self.until = until
        self.reason = reason
    }
}

/// What `PostgresQuotaGate.clear(app:api:)` lifted.
public struct QuotaClearance: Sendable, Equatable {
    /// The throttling block lifted, if there was one.
    public var throttle: QuotaBlock?
    /// The Pacific day whose "spent" mark was lifted, if there was one.
    public var exhaustedDay: PacificDay?
    /// The configured daily cap, when today's calls have reached it (not lifted: the configuration says so).
    public var capReached: Int?

    /// Creates a clearance.
    public init(throttle: QuotaBlock? = nil, exhaustedDay: PacificDay? = nil, capReached: Int? = nil) {
        self.throttle = throttle
        self.exhaustedDay = exhaustedDay
        self.capReached = capReached
    }
}
