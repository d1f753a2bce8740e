import Foundation
import Postgres

/// The top-level `refundRequests:` block: what applies to every app's requests.
public struct RefundRequestsConfig: Decodable, Sendable, Equatable {
    /// Facts (`consumption_fact`, and the copy kept with each request) older than this are purged by the nightly
    /// run (default 180 days).
    public var retention: ConfigDuration

    enum CodingKeys: String, CodingKey, CaseIterable { case retention }

    /// The defaults.
    public init(retention: ConfigDuration = .hours(180 * 24)) { self.retention = retention }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        retention = try container.decodeIfPresent(ConfigDuration.self, forKey: .retention) ?? .hours(180 * 24)
        guard retention.seconds >= 86_400 else {
            throw DecodingError.dataCorruptedError(
                forKey: .retention, in: container, debugDescription: "expected at least a day (facts outlive requests)")
        }
    }
}

extension ConsumptionFactStore {
    /// Purges facts (and usage events) older than `retention` before `now`, and the copies of them kept with requests received before
    /// then. Returns the facts deleted.
    public static func purge(retention: ConfigDuration, now: Date, on connection: PostgresConnection) throws -> Int {
        let cutoff = now.addingTimeInterval(-TimeInterval(retention.seconds))
        return try connection.transaction { connection in
            try connection.execute(
                "UPDATE refund_request SET facts = NULL WHERE received_at < $1 AND facts IS NOT NULL", [cutoff])
            try ConsumptionUsageEventStore.purge(before: cutoff, on: connection)
            return try connection.execute("DELETE FROM consumption_fact WHERE as_of < $1", [cutoff])
        }
    }
}
