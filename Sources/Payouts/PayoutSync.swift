import Foundation
import Logging
import Postgres
import RateLimiting
import StoreCalendar

/// `sync payouts` for one app: fetches the financial reports not stored yet and stores each whole.
///
/// Google: one listing of `earnings/earnings_` (or of one month) in the bucket; an object whose generation is already
/// stored is skipped without a download, a new or re-issued one is downloaded, parsed and stored. Apple: each fiscal
/// month from the first asked for up to the current one that is not stored yet is asked for; a 404 means Apple has
/// not published it. A report whose bytes are stored already (under any name) is not stored again, and one an
/// operator dropped (`payouts drop`) stays dropped.
public struct PayoutSync {
    /// The job name in `job_run` and the advisory lock.
    public static let job = "sync-payouts"

    /// Where one app's reports come from.
    public enum Source: Sendable {
        /// Google earnings in a Cloud Storage bucket.
        case google(CloudStorageClient, bucket: String)
        /// Apple FINANCIAL reports of a vendor.
        case apple(FinanceReportsClient, vendorNumber: String)
    }

    /// What one run did.
    public struct Summary: Sendable, Equatable {
        public var fetched = 0
        public var inserted = 0
        public var replaced = 0
        public var unchanged = 0
        public var skipped = 0
        public var notPublished = 0
        /// Reports whose bytes were stored already under another name: not stored again.
        public var duplicate = 0
        /// Reports an operator dropped: not fetched or stored again.
        public var keptDropped = 0
        /// Reports that could not be read (damaged, not in the store's format): the others were still stored.
        public var badFiles: [String] = []
    }

    let app: String
    let source: Source
    let connection: PostgresConnection
    let logger: Logger

    /// Creates the job for `app`.
    public init(app: String, source: Source, connection: PostgresConnection, logger: Logger) {
        self.app = app
        self.source = source
        self.connection = connection
        self.logger = logger
    }

    /// Fetches `month` (`YYYY-MM`), or every month from the ledger's first refund of the app up to `now`'s.
    /// - Parameter dryRun: fetch and parse, store nothing.
    /// - Throws: ``PayoutError``, `QuotaError`, `PostgresError`.
    public func run(month: CalendarMonth?, now: Date, purpose: CallPurpose, dryRun: Bool = false) async throws
        -> Summary
    {
        var summary = Summary()
        guard let first = try month ?? firstMonth() else { return summary }
        switch source {
        case .google(let client, let bucket):
            try await syncGoogle(
                client, bucket: bucket, first: first, month: month, purpose: purpose, dryRun: dryRun, into: &summary)
        case .apple(let client, let vendorNumber):
            let last = month ?? CalendarMonth(pacificMonthOf: now)
            try await syncApple(
                client, vendorNumber: vendorNumber, months: Self.months(from: first, through: last), purpose: purpose,
                dryRun: dryRun, into: &summary)
        }
        if !summary.badFiles.isEmpty {
            throw PayoutError(
                .badFile,
                "\(summary.badFiles.count) reports could not be read and were not stored "
                    + "(\(summary.badFiles.joined(separator: ", "))); the other \(summary.inserted + summary.replaced) "
                    + "new or re-issued reports were stored (see the lines above)")
        }
        return summary
    }

    /// Google: the bucket's earnings objects from `first` (or of `month`) whose generation is not stored yet.
    private func syncGoogle(
        _ client: CloudStorageClient, bucket: String, first: CalendarMonth, month: CalendarMonth?,
        purpose: CallPurpose, dryRun: Bool, into summary: inout Summary
    ) async throws {
        let prefix =
            month.map { String(format: "earnings/earnings_%04d%02d", $0.year, $0.month) } ?? "earnings/earnings_"
        let objects = try await client.list(bucket: bucket, prefix: prefix, purpose: purpose)
        for object in objects.sorted(by: { $0.name < $1.name }) where object.name.hasSuffix(".zip") {
            let objectMonth = Self.month(ofObject: object.name)
            guard let objectMonth, objectMonth >= first, month == nil || objectMonth == month else { continue }
            switch try storedGeneration(of: object) {
            case .loaded:
                summary.skipped += 1
                continue
            case .dropped:
                summary.keptDropped += 1
                continue
            case nil: break
            }
            let data = try await client.download(bucket: bucket, name: object.name, purpose: purpose)
            summary.fetched += 1
            try readable(object.name, into: &summary) { summary in
                let stream =
                    try EarningsReportParser.stream(zip: data, name: object.name, generation: object.generation)
                    ?? PayoutStream(
                        try EarningsReportParser.parse(zip: data, name: object.name, generation: object.generation))
                try store(stream, dryRun: dryRun, into: &summary)
            }
        }
    }

    /// Apple: each fiscal month of `months` not stored yet (a 404: not published yet).
    private func syncApple(
        _ client: FinanceReportsClient, vendorNumber: String, months: [CalendarMonth], purpose: CallPurpose,
        dryRun: Bool, into summary: inout Summary
    ) async throws {
        for reportDate in months {
            if try storedMonth(reportDate) {
                summary.skipped += 1
                continue
            }
            guard
                let data = try await client.financialReport(
                    vendorNumber: vendorNumber, reportDate: reportDate, purpose: purpose)
            else {
                summary.notPublished += 1
                logger.info("Apple has no FINANCIAL report for \(reportDate) yet", metadata: ["app": "\(app)"])
                continue
            }
            summary.fetched += 1
            let name = "financeReports \(vendorNumber) \(reportDate)"
            try readable(name, into: &summary) { summary in
                try store(
                    PayoutStream(try FinanceReportParser.parse(gzip: data, name: name)), dryRun: dryRun,
                    into: &summary)
            }
        }
    }

    /// Reads and stores one report; a report that cannot be read is logged and counted, and the others go on (one
    /// damaged file must not keep every later month out, night after night). Nothing of it is stored.
    private func readable(_ name: String, into summary: inout Summary, _ body: (inout Summary) throws -> Void) throws {
        do {
            try body(&summary)
        } catch let error as PayoutError where error.code == .badFile {
            summary.badFiles.append(name)
            logger.error("\(error); not stored, the other reports go on", metadata: ["app": "\(app)"])
        }
    }

    private func store(_ stream: PayoutStream, dryRun: Bool, into summary: inout Summary) throws {
        let report = stream.header
        guard !dryRun else {
            var count = 0
            try stream.rows { _ in count += 1 }
            logger.info("dry run: would store \(report.sourceName) (\(count) rows)")
            return
        }
        let stored = try PayoutStore(connection: connection).store(stream, app: app, ifDropped: .keepDropped)
        switch stored.outcome {
        case .inserted: summary.inserted += 1
        case .unchanged: summary.unchanged += 1
        case .duplicate:
            summary.duplicate += 1
            let held = "report \(stored.reportId) (\(stored.heldBy ?? ""))"
            logger.info(
                "\(report.sourceName) is the same file as \(held): not stored again",
                metadata: ["app": "\(app)", "month": "\(report.month)"])
        case .keptDropped:
            summary.keptDropped += 1
            let line =
                "\(report.sourceName) is report \(stored.reportId), dropped by an operator: not stored again "
                + "(storerecon import payouts loads it again by hand)"
            logger.info(
                "\(line)",
                metadata: ["app": "\(app)", "month": "\(report.month)"])
        case .replaced:
            summary.replaced += 1
            logger.warning(
                "the store re-issued \(report.sourceName); the old version was replaced",
                metadata: ["app": "\(app)", "month": "\(report.month)"])
        }
    }

    /// The US-Pacific month of the app's first refund in the ledger, or `nil` when it has none.
    func firstMonth() throws -> CalendarMonth? {
        let rows = try connection.query(
            """
            SELECT to_char(min(refunded_at) AT TIME ZONE 'America/Los_Angeles', 'YYYY-MM') AS month
            FROM refund WHERE app_id = $1
            """, [app])
        return try rows.first?.decodeIfPresent("month", as: CalendarMonth.self)
    }

    /// Where an object of this very generation (the same bytes) is: loaded, dropped by an operator, or neither.
    private enum Held { case loaded, dropped }

    private func storedGeneration(of object: CloudStorageClient.Object) throws -> Held? {
        guard let generation = object.generation else { return nil }
        let key = String(object.name.split(separator: "/").last ?? Substring(object.name))
        let rows = try connection.query(
            """
            SELECT bool_or(NOT dropped) AS loaded, bool_or(dropped) AS dropped FROM (
                SELECT false AS dropped FROM payout_report
                WHERE app_id = $1 AND store = 'google' AND report_key = $2 AND generation = $3
                UNION ALL
                SELECT true FROM payout_report_drop
                WHERE app_id = $1 AND store = 'google' AND report_key = $2 AND generation = $3) AS held
            """, [app, key, generation])
        if try rows.first?.decodeIfPresent("loaded", as: Bool.self) == true { return .loaded }
        if try rows.first?.decodeIfPresent("dropped", as: Bool.self) == true { return .dropped }
        return nil
    }

    private func storedMonth(_ month: CalendarMonth) throws -> Bool {
        try !connection.query(
            "SELECT 1 AS one FROM payout_report WHERE app_id = $1 AND store = 'apple' AND month = $2", [app, month]
        ).isEmpty
    }

    /// The month of `earnings/earnings_YYYYMM_...`.
    static func month(ofObject name: String) -> CalendarMonth? {
        guard let range = name.range(of: #"earnings_[0-9]{6}_"#, options: .regularExpression) else { return nil }
        let digits = name[range].dropFirst("earnings_".count).prefix(6)
        return try? CalendarMonth("\(digits.prefix(4))-\(digits.suffix(2))")
    }

    /// Every month from `first` through `last`, inclusive.
    static func months(from first: CalendarMonth, through last: CalendarMonth) -> [CalendarMonth] {
        guard first <= last else { return [] }
        return Array(sequence(first: first) { $0 < last ? $0.next : nil })
    }
}
