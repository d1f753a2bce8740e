import Foundation
import Ledger
import Postgres

/// One line of a consumption CSV, checked: `platform,purchase_id,customer_consented,delivery_status,
/// consumption_percent,sample_content_provided,as_of`. Pure.
public struct ConsumptionFactRow: Sendable, Equatable {
    /// `apple` or `google`.
    public var platform: RequestingStore
    /// Apple transactionId or originalTransactionId; Google orderId or purchaseToken.
    public var purchaseId: String
    /// The facts.
    public var facts: ConsumptionFacts

    /// The header, in order (columns may come in any order in a file).
    public static let columns = [
        "platform", "purchase_id", "customer_consented", "delivery_status", "consumption_percent",
        "sample_content_provided", "as_of",
    ]

    /// Where each column is in a file's header.
    /// - Throws: the reason, when a column is missing, repeated or unknown.
    public static func positions(_ header: [String]) throws(ConsumptionImportError) -> [Int] {
        var names = header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0].removeFirst() }
        for name in names where !columns.contains(name) {
            throw ConsumptionImportError(line: 1, reason: "unknown column \"\(String(name.prefix(60)))\"")
        }
        return try columns.map { (column) throws(ConsumptionImportError) -> Int in
            let found = names.indices.filter { names[$0] == column }
            guard found.count == 1 else {
                throw ConsumptionImportError(
                    line: 1, reason: found.isEmpty ? "missing column \(column)" : "column \(column) repeated")
            }
            return found[0]
        }
    }

    /// Facts in code.
    public init(platform: RequestingStore, purchaseId: String, facts: ConsumptionFacts) {
        self.platform = platform
        self.purchaseId = purchaseId
        self.facts = facts
    }

    /// Reads one data line.
    /// - Throws: the line's number and what is wrong with it.
    public init(fields: [String], positions: [Int], line: Int) throws(ConsumptionImportError) {
        func bad(_ reason: String) -> ConsumptionImportError { ConsumptionImportError(line: line, reason: reason) }
        guard fields.count == positions.count else {
            throw bad("expected \(positions.count) fields, found \(fields.count)")
        }
        let value = positions.map { fields[$0].trimmingCharacters(in: .whitespaces) }
        guard let platform = RequestingStore(rawValue: value[0].lowercased()) else {
            throw bad("platform \"\(Self.clip(value[0]))\" is not apple or google")
        }
        guard !value[1].isEmpty, value[1].utf8.count <= LedgerLimits.maxKeyBytes, !value[1].utf8.contains(0) else {
            throw bad("purchase_id is empty, longer than \(LedgerLimits.maxKeyBytes) bytes or holds a NUL byte")
        }
        let consented = try Self.boolean(value[2], "customer_consented", line: line)
        guard let delivery = DeliveryStatus(rawValue: value[3].lowercased()) else {
            throw bad(
                "delivery_status \"\(Self.clip(value[3]))\" is not one of "
                    + DeliveryStatus.allCases.map(\.rawValue).joined(separator: ", "))
        }
        var milli: Int?
        if !value[4].isEmpty {
            guard let parsed = Self.milliunits(value[4]) else {
                throw bad(
                    "consumption_percent \"\(Self.clip(value[4]))\" is not a number from 0 to 100 with at most 3 decimals"
                )
            }
            milli = parsed
        }
        let sample = try Self.boolean(value[5], "sample_content_provided", line: line)
        guard let asOf = PostgresTimestamp.parse(value[6]), PostgresTimestamp.hasOffset(value[6]),
            asOf != .distantPast, asOf != .distantFuture
        else {
            throw bad("as_of \"\(Self.clip(value[6]))\" is not an RFC 3339 time with an offset (2026-07-01T12:00:00Z)")
        }
        self.platform = platform
        purchaseId = value[1]
        facts = ConsumptionFacts(
            customerConsented: consented, deliveryStatus: delivery, consumptionMilli: milli,
            sampleContentProvided: sample, asOf: asOf)
    }

    /// `true`/`false` (also `1`/`0`, any case).
    static func boolean(_ text: String, _ column: String, line: Int) throws(ConsumptionImportError) -> Bool {
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default:
            throw ConsumptionImportError(line: line, reason: "\(column) \"\(clip(text))\" is not true or false")
        }
    }

    /// A percentage with at most 3 decimals as milliunits (`12.5` is 12500), or nil.
    static func milliunits(_ text: String) -> Int? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        // Digits only: `Int` would also read a sign, and "-0.5" would pass as 0.5.
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty, whole.count <= 3,
            whole.allSatisfy({ $0.isASCII && $0.isNumber }), let units = Int(whole)
        else { return nil }
        var fraction = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                return nil
            }
            fraction = Int(digits.padding(toLength: 3, withPad: "0", startingAt: 0)) ?? 0
        }
        let milli = units * 1000 + fraction
        return (0...100_000).contains(milli) && units >= 0 ? milli : nil
    }

    static func clip(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }
}

/// A consumption file's line that cannot be read.
public struct ConsumptionImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line number.
    public var line: Int
    /// What is wrong.
    public var reason: String

    /// Creates the error of one line.
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}
