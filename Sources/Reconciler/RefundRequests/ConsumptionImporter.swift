import Foundation
import Postgres

/// `storerecon import consumption FILE.csv`: the app backend's facts, all or nothing. Every bad line is reported with
/// its number; with any bad line nothing is written. A purchase's newest `as_of` wins, in the file and against
/// what is stored.
public struct ConsumptionImporter {
    /// What an import did.
    public struct Report: Sendable, Equatable {
        /// Data rows read.
        public var rowsRead = 0
        /// The bad lines (every one).
        public var badLines: [ConsumptionImportError] = []
        /// Facts written (new, or newer than the stored ones), counted per statement: a purchase in two chunks of
        /// a long file counts in each that changed it.
        public var written = 0
    }

    private let connection: PostgresConnection

    /// Creates an importer on `connection`.
    public init(connection: PostgresConnection) { self.connection = connection }

    /// Reads and stores a file.
    /// - Throws: `ReconcilerError` (`.input`) when the file cannot be read or its header is wrong.
    public func importFile(path: String, dryRun: Bool) throws -> Report {
        var directory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &directory), directory.boolValue {
            throw ReconcilerError(.input, "\(path): a directory, not a CSV file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ReconcilerError(.input, "\(path): cannot open the file")
        }
        defer { try? handle.close() }
        var reader = CSVReader(fileHandle: handle)
        return try importRecords(from: &reader, source: path, dryRun: dryRun)
    }

    /// Facts written in one statement: a large file is written as it is read, all in one transaction.
    static let chunk = 10_000

    /// Reads and stores from a reader: in one transaction, rolled back at the first bad line (the rest is still
    /// read, so that every bad line is named).
    public func importRecords(from reader: inout CSVReader, source: String, dryRun: Bool) throws -> Report {
        if dryRun { return try Self.read(&reader, source: source) { _ in } }
        struct Refused: Error { var report: Report }
        do {
            return try connection.transaction { connection in
                var written = 0
                var report = try Self.read(&reader, source: source) { rows in
                    written += try ConsumptionFactStore.upsert(rows, on: connection)
                }
                guard report.badLines.isEmpty else { throw Refused(report: report) }
                report.written = written
                return report
            }
        } catch let refused as Refused {
            return refused.report
        }
    }

    /// Reads every line, handing the good rows on in chunks (each purchase once, its newest `as_of`; a later chunk's
    /// older fact loses to the stored one in the statement) until the first bad line.
    private static func read(
        _ reader: inout CSVReader, source: String, write: ([ConsumptionFactRow]) throws -> Void
    ) throws -> Report {
        var report = Report()
        var newest: [String: ConsumptionFactRow] = [:]
        func flush() throws {
            defer { newest = [:] }
            guard report.badLines.isEmpty, !newest.isEmpty else { return }
            try write(
                newest.values.sorted { ($0.platform.rawValue, $0.purchaseId) < ($1.platform.rawValue, $1.purchaseId) })
        }
        do {
            guard let header = try reader.next() else { throw ReconcilerError(.input, "\(source): the file is empty") }
            let positions = try ConsumptionFactRow.positions(header.fields)
            while true {
                let record: CSVReader.Record?
                do {
                    record = try reader.next()
                } catch let malformed as CSVReader.Malformed {
                    // The reader goes on at the next line: every bad line is named, not only the first.
                    report.badLines.append(ConsumptionImportError(line: malformed.line, reason: malformed.reason))
                    continue
                }
                guard let record else { break }
                // A blank line is skipped, as in `import subscriptions`.
                if record.fields.count == 1 && record.fields[0].isEmpty { continue }
                report.rowsRead += 1
                let row: ConsumptionFactRow
                do {
                    row = try ConsumptionFactRow(fields: record.fields, positions: positions, line: record.line)
                } catch {
                    report.badLines.append(error)
                    continue
                }
                let key = "\(row.platform.rawValue) \(row.purchaseId)"
                if let kept = newest[key], kept.facts.asOf > row.facts.asOf { continue }
                newest[key] = row
                if newest.count >= chunk { try flush() }
            }
        } catch let error as ConsumptionImportError {
            throw ReconcilerError(.input, "\(source): \(error)")
        } catch let malformed as CSVReader.Malformed {
            throw ReconcilerError(.input, "\(source): line \(malformed.line): \(malformed.reason)")
        }
        try flush()
        return report
    }
}

/// The owner of `consumption_fact`.
public enum ConsumptionFactStore {
    /// Writes facts; a stored fact newer than the one given is kept. Returns the rows written.
    public static func upsert(_ rows: [ConsumptionFactRow], on connection: PostgresConnection) throws -> Int {
        try connection.execute(
            """
            INSERT INTO consumption_fact AS f (platform, purchase_id, customer_consented, delivery_status,
                                               consumption_milli, sample_content_provided, as_of)
            SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::int[], $6::boolean[],
                                 $7::timestamptz[])
            ON CONFLICT (platform, purchase_id) DO UPDATE SET
                customer_consented = EXCLUDED.customer_consented, delivery_status = EXCLUDED.delivery_status,
                consumption_milli = EXCLUDED.consumption_milli,
                sample_content_provided = EXCLUDED.sample_content_provided, as_of = EXCLUDED.as_of, loaded_at = now()
            WHERE EXCLUDED.as_of >= f.as_of
            """,
            [
                PostgresArray(rows.map(\.platform.rawValue)), PostgresArray(rows.map(\.purchaseId)),
                PostgresArray(rows.map(\.facts.customerConsented)),
                PostgresArray(rows.map(\.facts.deliveryStatus.rawValue)),
                PostgresArray(rows.map(\.facts.consumptionMilli)),
                PostgresArray(rows.map(\.facts.sampleContentProvided)), PostgresArray(rows.map(\.facts.asOf)),
            ])
    }

    /// The facts for a purchase, by any of its ids (the first id given that has facts wins).
    public static func facts(
        platform: RequestingStore, ids: [String], on connection: PostgresConnection
    ) throws -> ConsumptionFacts? {
        let rows = try connection.query(
            """
            SELECT purchase_id, customer_consented, delivery_status, consumption_milli, sample_content_provided, as_of
            FROM consumption_fact WHERE platform = $1 AND purchase_id = ANY($2::text[])
            """,
            [platform.rawValue, PostgresTextArray(ids)])
        var found: [String: ConsumptionFacts] = [:]
        for row in rows {
            found[try row.decode("purchase_id")] = try ConsumptionFacts(row: row)
        }
        return ids.lazy.compactMap { found[$0] }.first
    }
}
