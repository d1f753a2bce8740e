import Foundation
import Postgres

/// One `ConsumptionUsageEvent` of Google's `orders.reviewrefund`: an instance of the customer using what they bought,
/// as the app backend wrote it to `consumption_usage_event`. Holds personal data (IP address, location): it lives
/// only until the answer is recorded.
///
/// [Google documentation](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/reviewrefund)
public struct ConsumptionUsageEvent: Encodable, Sendable, Equatable {
    /// Google's `CoarseLocation`.
    public struct Location: Encodable, Sendable, Equatable {
        /// CLDR region code (required by Google when a location is given).
        public var regionCode: String
        public var administrativeArea: String?
        public var locality: String?
        public var sublocality: String?
    }

    /// Google's limit on `consumptionItemDescription`, in characters.
    public static let maxDescription = 5000

    /// When the customer used it (RFC 3339 on the wire).
    public var consumptionTime: Date?
    public var ipAddress: String?
    public var location: Location?
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?
    /// At most ``maxDescription`` characters (cut when read).
    public var consumptionItemDescription: String?

    enum CodingKeys: String, CodingKey {
        case consumptionTime, ipAddress, location, obfuscatedAccountId, obfuscatedProfileId
        case consumptionItemDescription
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(
            consumptionTime.map { $0.formatted(.iso8601) }, forKey: .consumptionTime)
        try container.encodeIfPresent(ipAddress, forKey: .ipAddress)
        try container.encodeIfPresent(location, forKey: .location)
        try container.encodeIfPresent(obfuscatedAccountId, forKey: .obfuscatedAccountId)
        try container.encodeIfPresent(obfuscatedProfileId, forKey: .obfuscatedProfileId)
        try container.encodeIfPresent(consumptionItemDescription, forKey: .consumptionItemDescription)
    }
}

/// The owner of `consumption_usage_event`: the backend writes rows, storerecon reads them for one answer and deletes
/// them when the answer is recorded.
public enum ConsumptionUsageEventStore {
    /// Google rejects an answer with more events than this.
    public static let maxEvents = 1000

    /// The events of each purchase (by any of its ids), in one round trip: for each, most recent first, at most
    /// ``maxEvents``.
    public static func events(forEach purchases: [[String]], on connection: PostgresConnection) throws
        -> [[ConsumptionUsageEvent]]
    {
        var found = [[ConsumptionUsageEvent]](repeating: [], count: purchases.count)
        let pairs = purchases.enumerated().flatMap { index, ids in ids.map { (index, $0) } }
        guard !pairs.isEmpty else { return found }
        let rows = try connection.query(
            """
            WITH asked AS (
                SELECT n, array_agg(purchase_id) AS ids FROM unnest($1::int[], $2::text[]) AS a(n, purchase_id)
                GROUP BY n
            )
            SELECT asked.n, e.*
            FROM asked CROSS JOIN LATERAL (
                SELECT id, consumption_time, ip_address, region_code, administrative_area, locality, sublocality,
                       obfuscated_account_id, obfuscated_profile_id, item_description
                FROM consumption_usage_event WHERE purchase_id = ANY (asked.ids)
                ORDER BY consumption_time DESC NULLS LAST, id DESC LIMIT $3
            ) e
            ORDER BY asked.n, e.consumption_time DESC NULLS LAST, e.id DESC
            """, [PostgresArray(pairs.map(\.0)), PostgresTextArray(pairs.map(\.1)), maxEvents])
        for row in rows {
            let index: Int = try row.decode("n")
            guard found.indices.contains(index) else { continue }
            found[index].append(try event(row))
        }
        return found
    }

    /// An event as the backend wrote it, less what Google would refuse: a blank text (an empty `ipAddress` or
    /// `regionCode` is no value) is left out, and so is a location without its region code, which Google requires.
    private static func event(_ row: PostgresRow) throws -> ConsumptionUsageEvent {
        func text(_ column: String) throws -> String? {
            try row.decodeIfPresent(column, as: String.self).flatMap {
                $0.allSatisfy(\.isWhitespace) ? nil : $0
            }
        }
        return ConsumptionUsageEvent(
            consumptionTime: try row.decodeIfPresent("consumption_time"),
            ipAddress: try text("ip_address"),
            location: try text("region_code").map { region in
                ConsumptionUsageEvent.Location(
                    regionCode: region, administrativeArea: try text("administrative_area"),
                    locality: try text("locality"), sublocality: try text("sublocality"))
            },
            obfuscatedAccountId: try text("obfuscated_account_id"),
            obfuscatedProfileId: try text("obfuscated_profile_id"),
            consumptionItemDescription: try text("item_description").map {
                String($0.unicodeScalars.prefix(ConsumptionUsageEvent.maxDescription))
            })
    }

    /// Deletes the events of answered requests (by their purchases' ids): evidence sent to Google is not kept past
    /// the answer, even when another review of the same purchase token still waits (that one goes without, unless
    /// the backend writes it again). Returns how many.
    @discardableResult
    public static func delete(ids: [String], on connection: PostgresConnection) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try connection.execute(
            "DELETE FROM consumption_usage_event WHERE purchase_id = ANY($1::text[])", [PostgresTextArray(ids)])
    }

    /// Deletes the events of requests `app` has given up (by their purchases' ids), but not those of an id another
    /// of its requests that may still be answered names (undecided, or without facts or consent before its
    /// deadline): a subscription's purchase token is shared by the reviews of all its renewal orders, and evidence
    /// not sent yet is only deleted once nothing can send it. Call it once the requests themselves are recorded.
    /// Returns how many.
    @discardableResult
    public static func deleteUnshared(
        ids: [String], app: String, now: Date, on connection: PostgresConnection
    ) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try connection.execute(
            """
            DELETE FROM consumption_usage_event e
            WHERE e.purchase_id = ANY($1::text[])
              AND NOT EXISTS (
                  SELECT 1 FROM refund_request o
                  WHERE o.app_id = $2
                    AND (o.answer IS NULL OR (o.answer IN ('no_facts', 'no_consent') AND o.deadline > $3))
                    AND (o.transaction_id = e.purchase_id OR o.original_id = e.purchase_id))
            """, [PostgresTextArray(ids), app, now])
    }

    /// Deletes events loaded before `cutoff` (the retention purge). Returns how many.
    @discardableResult
    public static func purge(before cutoff: Date, on connection: PostgresConnection) throws -> Int {
        try connection.execute("DELETE FROM consumption_usage_event WHERE loaded_at < $1", [cutoff])
    }
}
