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

    /// Creates a rule.
    public init(limit: Int, window: Window, name: String) {
        self.limit = limit
        self.window = window
        self.name = name
    }

    /// Whether this rule is a daily cap.
    public var isDaily: Bool { window == .pacificDay }
}
