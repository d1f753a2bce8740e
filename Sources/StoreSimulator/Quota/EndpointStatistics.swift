/// What one app's endpoint was asked: calls granted and refused, and the most granted calls in any window,
/// computed exactly from the grant times (on the quota clock).
public struct EndpointStatistics: Sendable, Equatable {
    /// The app id.
    public var app: String
    /// Apple: `production` or `sandbox`; nil for Google.
    public var environment: String?
    /// The endpoint.
    public var endpoint: SimulatorEndpoint
    /// Calls answered (including those a fault then spoiled).
    public var granted: Int
    /// Calls refused for quota.
    public var refused: Int
    /// The most grants in any 1-second window.
    public var maxInAnySecond: Int
    /// The most grants in any 30-second window.
    public var maxInAny30Seconds: Int
    /// The most grants in any 60-second window.
    public var maxInAnyMinute: Int
    /// The most grants in any US-Pacific day.
    public var maxInAnyPacificDay: Int
    /// Grants per Pacific day, keyed `YYYY-MM-DD`.
    public var grantsPerPacificDay: [String: Int]
    /// The first and the last grant (ms on the quota clock), nil before any: the span a run's calls took.
    public var firstGrantMillis: Int64?
    public var lastGrantMillis: Int64?
}
