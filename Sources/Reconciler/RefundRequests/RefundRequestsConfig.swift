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
    /// Purges facts (and usage events) older than `retention` before `now`, and what of them requests received before
    /// then keep: their facts, the facts in the body sent (its preference stays), Google's pending refund token; and
    /// the RTDN messages received before then (each holds its notification whole). Returns the facts deleted.
    public static func purge(retention: ConfigDuration, now: Date, on connection: PostgresConnection) throws -> Int {
        let cutoff = now.addingTimeInterval(-TimeInterval(retention.seconds))
        return try connection.transaction { connection in
            try connection.execute(
                """
                UPDATE refund_request
                SET facts = NULL, pending_token = NULL, body_sent = body_sent - $2::text[]
                WHERE received_at < $1
                  AND (facts IS NOT NULL OR pending_token IS NOT NULL OR body_sent ?| $2::text[])
                """, [cutoff, PostgresTextArray(Self.factFields)])
            try connection.execute("DELETE FROM rtdn_message WHERE received_at < $1", [cutoff])
            try ConsumptionUsageEventStore.purge(before: cutoff, on: connection)
            return try connection.execute("DELETE FROM consumption_fact WHERE as_of < $1", [cutoff])
        }
    }

    /// The fields of a body sent that carry facts (Apple's `ConsumptionRequest`, Google's review answer as stored)
    /// or the token of Google's review.
    static let factFields = [
        "customerConsented", "deliveryStatus", "consumptionPercentage", "sampleContentProvided",
        "consumptionPercentageMilliunits", "consumptionUsageEventsSent", "pendingRefundToken",
    ]
}
