import Foundation

/// A financial report downloaded by hand (`storerecon import payouts`): a Google earnings zip or an Apple
/// FINANCIAL gzip, told apart by their first bytes.
public enum PayoutFile {
    /// Reads and parses the file at `path`.
    /// - Parameter platform: the app's store; a file of the other store is refused.
    /// - Throws: ``PayoutError`` (`.badFile`) naming the file and, for bad content, the line and column.
    public static func read(path: String, store: PayoutReport.Store) throws -> PayoutReport {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PayoutError(.badFile, "cannot read the file (missing or not readable)", file: path)
        }
        return try parse(data, name: path, store: store)
    }

    /// Reads the file at `path` for storing row by row (``PayoutStore/store(_:app:)-(PayoutStream,_)``): a Google
    /// earnings zip named as Google names them is parsed while it is stored; any other report is parsed whole first.
    /// - Throws: ``PayoutError`` (`.badFile`) naming the file; a bad row throws when the rows are read.
    public static func stream(path: String, store: PayoutReport.Store) throws -> PayoutStream {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PayoutError(.badFile, "cannot read the file (missing or not readable)", file: path)
        }
        if store == .google, data.starts(with: [0x50, 0x4B]),
            let stream = try EarningsReportParser.stream(zip: data, name: path)
        {
            return stream
        }
        return PayoutStream(try parse(data, name: path, store: store))
    }

    /// Parses a report's bytes.
    public static func parse(_ data: Data, name: String, store: PayoutReport.Store) throws -> PayoutReport {
        let isZip = data.starts(with: [0x50, 0x4B])
        let isGzip = data.starts(with: [0x1F, 0x8B])
        switch store {
        case .google:
            guard isZip else {
                throw PayoutError(.badFile, "expected a Google earnings zip (earnings_YYYYMM_*.zip)", file: name)
            }
            return try EarningsReportParser.parse(zip: data, name: name)
        case .apple:
            guard isGzip else {
                throw PayoutError(
                    .badFile, "expected an Apple FINANCIAL report as App Store Connect sends it (gzip)", file: name)
            }
            return try FinanceReportParser.parse(gzip: data, name: name)
        }
    }
}
