import Foundation
import Ledger
import Postgres

/// `storerecon import subscriptions FILE.csv`: loads the app backend's subscriptions.
///
/// The CSV (RFC 4180, header row) has columns `app,store_id,product_id,expires_at` and optionally `user_ref`, in any
/// order. Valid rows go through COPY into a session-private staging table and one statement merges them into
/// `subscription` by `(app, store_id)`: a re-import updates changed rows and never duplicates. Every bad line is
/// reported with its number and reason; with any bad line nothing is merged unless `skipInvalid` is set.
public struct SubscriptionImporter {
    /// One rejected line.
    public struct BadLine: Sendable, Equatable, CustomStringConvertible {
        /// The 1-based line number in the file.
        public var line: Int
        /// Why it was rejected.
        public var reason: String

        public var description: String { "line \(line): \(reason)" }
    }

    /// What an import did.
    public struct Report: Sendable, Equatable {
        /// Data rows read (header excluded).
        public var rowsRead = 0
        /// Rows that passed validation.
        public var rowsValid = 0
        /// New subscriptions.
        public var inserted = 0
        /// Existing subscriptions whose product, expiry or user_ref changed.
        public var updated = 0
        /// Number of bad lines.
        public var badLineCount = 0
        /// The first bad lines (at most ``SubscriptionImporter/maxReportedBadLines``).
        public var badLines: [BadLine] = []
        /// Whether the valid rows were merged.
        public var merged = false
    }

    /// Bad lines kept for the report; the count covers them all.
    public static let maxReportedBadLines = 1000

    static let requiredColumns = ["app", "store_id", "product_id", "expires_at"]
    static let optionalColumns = ["user_ref"]

    private let connection: PostgresConnection
    let knownApps: Set<String>
    let appleApps: Set<String>
    let assumeUTC: Bool

    /// Creates an importer.
    /// - Parameters:
    ///   - knownApps: the configured app ids; a row naming another app is a bad line.
    ///   - appleApps: those of them on the App Store, whose `store_id` is an original transaction id (digits).
    ///   - assumeUTC: read an `expires_at` without an offset as UTC; otherwise such a line is bad.
    public init(
        connection: PostgresConnection, knownApps: Set<String>, appleApps: Set<String> = [], assumeUTC: Bool = false
    ) {
        self.connection = connection
        self.knownApps = knownApps
        self.appleApps = appleApps
        self.assumeUTC = assumeUTC
    }

    /// Imports a file.
    /// - Parameters:
    ///   - path: the CSV file.
    ///   - skipInvalid: merge the valid rows even when some lines are bad.
    ///   - dryRun: validate and count, write nothing.
    /// - Returns: the report; `merged` is false when bad lines stopped the merge.
    /// - Throws: `ReconcilerError` (`.input`) when the file cannot be read or its header is wrong.
    public func importFile(path: String, skipInvalid: Bool, dryRun: Bool = false) throws -> Report {
        var directory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &directory), directory.boolValue {
            throw ReconcilerError(.input, "\(path): a directory, not a CSV file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ReconcilerError(.input, "\(path): cannot open the file")
        }
        defer { try? handle.close() }
        var reader = CSVReader(fileHandle: handle)
        return try importRecords(from: &reader, source: path, skipInvalid: skipInvalid, dryRun: dryRun)
    }

    /// Imports from a reader (tests and fuzzing use in-memory bytes).
    public func importRecords(
        from reader: inout CSVReader, source: String, skipInvalid: Bool, dryRun: Bool = false
    ) throws -> Report {
        let header: CSVReader.Record
        do {
            guard let first = try reader.next() else { throw ReconcilerError(.input, "\(source): the file is empty") }
            header = first
        } catch let malformed as CSVReader.Malformed {
            throw ReconcilerError(.input, "\(source): line \(malformed.line): \(malformed.reason)")
        }
        let columns = try Self.columnPositions(header.fields, source: source)
        var report = Report()
        do {
            try connection.transaction { _ in
                try load(from: &reader, columns: columns, skipInvalid: skipInvalid, dryRun: dryRun, into: &report)
            }
        } catch is DiscardedLoad {
            report.inserted = 0
        }
        return report
    }

    /// Thrown to roll back rows copied straight into `subscription` when bad lines forbid the merge.
    private struct DiscardedLoad: Error {}

    /// Loads the file's valid rows: straight into `subscription` on a first import, else through a staging table
    /// merged by (app, store_id); nothing is merged when bad lines forbid it.
    private func load(
        from reader: inout CSVReader, columns: Columns, skipInvalid: Bool, dryRun: Bool, into report: inout Report
    ) throws {
        // When none of the configured apps has a subscription yet (a first import), every valid row is new: they
        // go straight into the table, with no staging table and no conflict check, which halves the time.
        let direct = try !dryRun && SubscriptionLedger.lockIfFirstImport(apps: knownApps.sorted(), on: connection)
        if !direct {
            try connection.execute(
                """
                CREATE TEMP TABLE subscription_import (
                    line_no bigint NOT NULL, app_id text NOT NULL, store_id text NOT NULL,
                    product_id text NOT NULL, expires_at timestamptz, user_ref text
                ) ON COMMIT DROP
                """)
        }
        try copyRows(from: &reader, columns: columns, direct: direct, into: &report)
        guard !dryRun, report.badLineCount == 0 || skipInvalid else {
            if direct { throw DiscardedLoad() }
            return
        }
        if direct {
            report.inserted = report.rowsValid
            report.merged = true
            return
        }
        (report.inserted, report.updated) = try mergeStaged()
        report.merged = true
    }

    /// Copies the file's valid rows, each (app, store_id) once, into `subscription` (`direct`) or the staging
    /// table; every bad or repeated line is noted in `report`.
    private func copyRows(
        from reader: inout CSVReader, columns: Columns, direct: Bool, into report: inout Report
    ) throws {
        func rows(_ writer: inout CopyWriter) throws {
            var firstLine: [Int: Int] = [:]
            let hasher = KeyHasher()
            while true {
                let record: CSVReader.Record
                do {
                    guard let next = try reader.next() else { break }
                    record = next
                } catch let malformed as CSVReader.Malformed {
                    report.rowsRead += 1
                    Self.note(BadLine(line: malformed.line, reason: malformed.reason), in: &report)
                    continue
                }
                if record.fields.count == 1 && record.fields[0].isEmpty { continue }  // blank line
                report.rowsRead += 1
                switch validate(record, columns: columns) {
                case .failure(let bad):
                    Self.note(bad, in: &report)
                case .success(let row):
                    let key = hasher.hash(row.app, row.storeId)
                    if let previous = firstLine[key] {
                        Self.note(
                            BadLine(
                                line: record.line, reason: "duplicate of line \(previous) (same app and store_id)"),
                            in: &report)
                        continue
                    }
                    firstLine[key] = record.line
                    report.rowsValid += 1
                    if direct {
                        try writer.writeRow([row.app, row.storeId, row.productId, row.expiresAt, row.userRef])
                    } else {
                        try writer.writeRow([
                            String(record.line), row.app, row.storeId, row.productId, row.expiresAt, row.userRef,
                        ])
                    }
                }
            }
        }
        if direct {
            try SubscriptionLedger.copyImported(on: connection, rows)
        } else {
            try connection.copyIn(
                "COPY subscription_import (line_no, app_id, store_id, product_id, expires_at, user_ref) FROM STDIN",
                rows)
        }
    }

    /// Merges the staging table into `subscription` by (app, store_id). Returns (inserted, updated).
    private func mergeStaged() throws -> (Int, Int) {
        try SubscriptionLedger.mergeImported(on: connection)
    }

    private static func note(_ bad: BadLine, in report: inout Report) {
        report.badLineCount += 1
        if report.badLines.count < maxReportedBadLines { report.badLines.append(bad) }
    }
}

extension SubscriptionImporter.BadLine: Error {}

/// Hashes (app, store_id) pairs for duplicate detection without keeping a million strings alive.
private struct KeyHasher {
    func hash(_ app: String, _ storeId: String) -> Int {
        var hasher = Hasher()
        hasher.combine(app)
        hasher.combine(storeId)
        return hasher.finalize()
    }
}
