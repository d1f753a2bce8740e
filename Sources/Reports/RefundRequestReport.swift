import Foundation
import Postgres

/// `storerecon report refund-requests`: the stores' refund requests received in a period, grouped or one row per
/// request: how many were answered in time, missed, without facts, without consent, not supported or refused, and
/// what the stores decided. Reads `refund_request`; never writes.
public struct RefundRequestReport: Sendable, Equatable {
    /// What rows may be grouped by.
    public enum Dimension: String, Sendable, CaseIterable {
        case app, platform, rule, product, country, outcome

        /// The SQL expression of the group key.
        var sql: String {
            switch self {
            case .app: "app_id"
            case .platform: "store"
            case .rule: "coalesce(rule, '-')"
            case .product: "coalesce(product_id, '-')"
            case .country: "coalesce(country, '-')"
            case .outcome: "coalesce(decision, '-')"
            }
        }
    }

    /// The counted columns, in order (the names of the table, CSV and JSON columns).
    public static let counts = [
        "requests", "answered", "missed", "no_facts", "no_consent", "not_supported", "failed", "open", "refunded",
        "declined", "pending",
    ]

    /// One group: its keys (in the order of the dimensions) and its counts (in the order of ``counts``).
    public struct Group: Sendable, Equatable, Codable {
        public var keys: [String]
        public var counts: [Int]
    }

    /// The dimensions.
    public var dimensions: [Dimension]
    /// The groups, in key order.
    public var groups: [Group]
    /// The money refunded and kept, per currency (the sums of the detail rows' money).
    public var money: [MoneyLine] = []

    /// The totals: the sum of the groups, column by column.
    public var totals: [Int] {
        groups.reduce(into: Array(repeating: 0, count: Self.counts.count)) { sums, group in
            for (index, value) in group.counts.enumerated() { sums[index] += value }
        }
    }

    /// Which apps' requests a report counts, by the app's store environment (`environment`, SQL; `$n` the filter's
    /// raw value): Apple's test environments are left out unless asked for, as in `report refunds` (an app reads one
    /// environment's notifications, so its environment is its requests').
    static func environmentFilter(_ environment: String, parameter: Int) -> String {
        """
        AND ($\(parameter)::text = 'all' OR ($\(parameter)::text = 'production') = (\(environment) = 'production'))
        """
    }

    /// The environment of the app of `table`'s row, as SQL.
    static func appEnvironment(_ table: String) -> String {
        "(SELECT lower(a.environment) FROM app a WHERE a.id = \(table).app_id)"
    }

    /// Reads the groups of requests received in `[from, to)` of apps of `environment`.
    public static func gather(
        from: Date, to: Date, by dimensions: [Dimension],
        environment: RefundReportOptions.EnvironmentFilter = .production, on connection: PostgresConnection
    ) throws -> RefundRequestReport {
        let keys = dimensions.enumerated().map { "\($1.sql) AS k\($0)" }
        let counted = [
            "count(*)", "count(*) FILTER (WHERE answer = 'answered')", "count(*) FILTER (WHERE answer = 'missed')",
            "count(*) FILTER (WHERE answer = 'no_facts')", "count(*) FILTER (WHERE answer = 'no_consent')",
            "count(*) FILTER (WHERE answer = 'not_supported')", "count(*) FILTER (WHERE answer = 'failed')",
            "count(*) FILTER (WHERE answer IS NULL)", "count(*) FILTER (WHERE decision = 'refunded')",
            "count(*) FILTER (WHERE decision = 'declined')", "count(*) FILTER (WHERE decision = 'pending')",
        ].enumerated().map { "\($1)::int AS c\($0)" }
        let positions = dimensions.indices.map { String($0 + 1) }.joined(separator: ", ")
        let grouping = dimensions.isEmpty ? "" : "GROUP BY \(positions) ORDER BY \(positions)"
        let rows = try connection.query(
            """
            SELECT \((keys + counted).joined(separator: ", "))
            FROM refund_request WHERE received_at >= $1 AND received_at < $2
                \(environmentFilter(appEnvironment("refund_request"), parameter: 3)) \(grouping)
            """, [from, to, environment.rawValue])
        let groups = try rows.map { row in
            Group(
                keys: try dimensions.indices.map { try row.decode("k\($0)", as: String.self) },
                counts: try counts.indices.map { try row.decode("c\($0)", as: Int.self) })
        }
        return RefundRequestReport(
            dimensions: dimensions, groups: groups.filter { $0.counts[0] > 0 },
            money: moneyLines(try money(from: from, to: to, environment: environment, on: connection).values))
    }

    /// The report as a terminal table, CSV (RFC 4180) or JSON; the table and CSV end with the totals.
    public func render(_ format: String) throws -> String {
        let header = dimensions.map(\.rawValue) + Self.counts
        let rows = groups.map { $0.keys + $0.counts.map(String.init) }
        // Without dimensions the one group is the total.
        let total: [[String]] =
            dimensions.isEmpty
            ? [] : [["total"] + Array(repeating: "", count: dimensions.count - 1) + totals.map(String.init)]
        switch format {
        // The money follows the counts as a table of its own (after an empty line).
        case "table":
            return TextColumns.align([header] + rows + total) + "\n"
                + TextColumns.align([Self.moneyColumns] + Self.moneyRows(money))
        case "csv":
            return Self.csv([header] + rows + total) + "\r\n" + Self.csv([Self.moneyColumns] + Self.moneyRows(money))
        case "json":
            struct Document: Encodable {
                var dimensions: [String]
                var columns: [String]
                var groups: [Group]
                var totals: [Int]
                var money: [MoneyLine]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let document = Document(
                dimensions: dimensions.map(\.rawValue), columns: Self.counts, groups: groups, totals: totals,
                money: money)
            return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
        default:
            throw RefundRequestReportError(message: "--format: expected table, csv or json")
        }
    }
}

extension RefundRequestReport {
    /// The columns of `--detail`.
    public static let detailColumns = [
        "store", "app", "request_id", "transaction_id", "product", "country", "received_at", "deadline", "rule",
        "preference", "answer", "error_code", "decision", "currency", "refunded", "kept",
    ]

    /// One row per request received in `[from, to)` of apps of `environment`, oldest first (``detailColumns``;
    /// empty cells for unknowns).
    public static func detail(
        from: Date, to: Date, environment: RefundReportOptions.EnvironmentFilter = .production,
        on connection: PostgresConnection
    ) throws -> [[String]] {
        let money = try money(from: from, to: to, environment: environment, on: connection)
        return try connection.query(
            """
            SELECT id, store, app_id, request_id, transaction_id, coalesce(product_id, '') AS product,
                   coalesce(country, '') AS country, to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS received,
                   to_char(deadline AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS deadline_at,
                   coalesce(rule, '') AS rule, coalesce(preference, '') AS preference, coalesce(answer, '') AS answer,
                   coalesce(error_code, '') AS error_code, coalesce(decision, '') AS decision
            FROM refund_request WHERE received_at >= $1 AND received_at < $2
                \(environmentFilter(appEnvironment("refund_request"), parameter: 3))
            ORDER BY received_at, id
            """, [from, to, environment.rawValue]
        ).map { row in
            try [
                "store", "app_id", "request_id", "transaction_id", "product", "country", "received", "deadline_at",
                "rule", "preference", "answer", "error_code", "decision",
            ].map { try row.decode($0, as: String.self) } + moneyCells(money[try row.decode("id", as: Int64.self)])
        }
    }

    /// Detail rows as a table, CSV or JSON (an array of objects).
    public static func renderDetail(_ rows: [[String]], format: String) throws -> String {
        switch format {
        case "table": return TextColumns.align([detailColumns] + rows)
        case "csv": return csv([detailColumns] + rows)
        case "json":
            let objects = rows.map { Dictionary(uniqueKeysWithValues: zip(detailColumns, $0)) }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return String(decoding: try encoder.encode(objects), as: UTF8.self) + "\n"
        default: throw RefundRequestReportError(message: "--format: expected table, csv or json")
        }
    }

    static func csv(_ rows: [[String]]) -> String {
        rows.map { $0.map(RefundReport.csvField).joined(separator: ",") + "\r\n" }.joined()
    }
}

/// A report request that cannot be answered (a bad option).
public struct RefundRequestReportError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    public var description: String { message }
}
