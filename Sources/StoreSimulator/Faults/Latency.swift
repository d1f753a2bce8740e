import Foundation

/// How long every store answer takes: a fixed delay and a jitter around it, as a real store a second or more away.
///
/// Applied to every store endpoint (Google OAuth and API, Apple), after the call is admitted against the quota and
/// before the answer goes back, so the quota counts calls in the order they were sent and an answer, a refusal or
/// an error all arrive late alike. The admin API answers at once.
public struct Latency: Sendable, Equatable, Codable {
    /// The mean delay, milliseconds.
    public var millis: Int
    /// Each answer's delay is drawn uniformly from `millis ± jitterMillis` (never below 0).
    public var jitterMillis: Int

    /// Creates a latency.
    public init(millis: Int = 0, jitterMillis: Int = 0) {
        self.millis = max(0, millis)
        self.jitterMillis = max(0, jitterMillis)
    }

    /// No delay.
    public static let none = Latency()

    /// Whether answers are delayed at all.
    public var isNone: Bool { millis == 0 && jitterMillis == 0 }

    /// One answer's delay, milliseconds.
    func draw() -> Int {
        guard jitterMillis > 0 else { return millis }
        return max(0, millis + Int.random(in: -jitterMillis...jitterMillis))
    }

    /// Parses `1500ms`, `1.5s` or `1500` (milliseconds).
    public static func parseMillis(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasSuffix("ms"), let value = Double(trimmed.dropLast(2)), value >= 0 { return Int(value) }
        if trimmed.hasSuffix("s"), let value = Double(trimmed.dropLast(1)), value >= 0 { return Int(value * 1000) }
        if let value = Double(trimmed), value >= 0 { return Int(value) }
        return nil
    }
}
