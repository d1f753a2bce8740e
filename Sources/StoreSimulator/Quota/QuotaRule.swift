/// One limit on calls to an endpoint: at most `limit` granted calls in any rolling window, or in one US-Pacific
/// day.
public struct QuotaRule: Sendable, Equatable, Codable {
    /// The window a rule counts over.
    public enum Window: Sendable, Equatable, Codable {
        /// Any span of this many milliseconds.
        case rolling(millis: Int64)
        /// A US-Pacific calendar day.
        case pacificDay
    }

    /// How many calls may be granted in the window.
    public var limit: Int
    /// The window.
    public var window: Window
    /// What the store calls the limit (used in Google's message: "Queries per day").
    public var name: String

    /// A counter several endpoints share (Google's "Orders" bucket counts voided purchases and `orders.*`
    /// together), or nil for the endpoint's own.
    public var pool: String?

    /// Creates a rule.
    public init(limit: Int, window: Window, name: String, pool: String? = nil) {
        self.limit = limit
        self.window = window
        self.name = name
        self.pool = pool
    }

    /// Whether this rule is a daily cap.
    public var isDaily: Bool { window == .pacificDay }
}
