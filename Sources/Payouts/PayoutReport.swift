import Crypto
import Foundation
import StoreCalendar

/// One financial report file as a store gave it, parsed: what the tie-out needs of each row, and every raw value.
public struct PayoutReport: Sendable, Equatable {
    /// The store that paid out.
    public enum Store: String, Sendable, Equatable, Codable {
        case google, apple
    }

    /// The store.
    public var store: Store
    /// What makes the report the same report (Google: the object's file name; Apple: `FINANCIAL:ZZ:<start>:<end>`).
    public var reportKey: String
    /// `YYYY-MM`: Google's US-Pacific calendar month, Apple's fiscal month (the calendar month of its period's middle
    /// day).
    public var month: CalendarMonth
    /// The first day of the report's period (`YYYY-MM-DD`).
    public var periodStart: String
    /// The last day of the report's period, inclusive (`YYYY-MM-DD`).
    public var periodEnd: String
    /// The object name, request or file it came from.
    public var sourceName: String
    /// SHA-256 of the file's bytes, lower-case hex.
    public var checksum: String
    /// The Cloud Storage generation, when fetched from a bucket.
    public var generation: String?
    /// The file as the store gave it (the zip, the gzip, or the text imported by hand), stored whole: every row's
    /// raw values are in it (a row's `line` finds them). `nil` for a report built in code.
    public var file: Data?
    /// The rows, in file order.
    public var rows: [PayoutRow]

    /// Creates a report.
    public init(
        store: Store, reportKey: String, month: CalendarMonth, periodStart: String, periodEnd: String,
        sourceName: String,
        checksum: String, generation: String? = nil, file: Data? = nil, rows: [PayoutRow]
    ) {
        self.store = store
        self.reportKey = reportKey
        self.month = month
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.sourceName = sourceName
        self.checksum = checksum
        self.generation = generation
        self.file = file
        self.rows = rows
    }

    /// SHA-256 of `data`, lower-case hex.
    public static func checksum(of data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

/// A report whose rows are read while they are stored (a million-row earnings report is parsed into the database
/// row by row, the parsing and PostgreSQL's work side by side, instead of held whole first).
public struct PayoutStream {
    /// The report's facts; its `rows` are empty.
    public var header: PayoutReport
    /// Reads the rows in file order, calling the argument with each; throws ``PayoutError`` for a bad row.
    public var rows: ((PayoutRow) throws -> Void) throws -> Void

    /// A stream over a report already read whole.
    public init(_ report: PayoutReport) {
        var header = report
        header.rows = []
        self.header = header
        self.rows = { body in for row in report.rows { try body(row) } }
    }

    /// A stream of `header`'s report whose rows `rows` reads.
    public init(header: PayoutReport, rows: @escaping ((PayoutRow) throws -> Void) throws -> Void) {
        self.header = header
        self.rows = rows
    }
}

/// One row of a financial report: the values the tie-out reads, decoded where the row entered. Every raw value is in
/// the report's ``PayoutReport/file``, at the row's `line`.
public struct PayoutRow: Sendable, Equatable {
    /// Line number in the file (1 is the header).
    public var line: Int
    /// Google `Transaction Type` (`Charge refund`, ...; unknown types kept raw); Apple `Sales or Return` (`S`, `R`).
    public var kind: String
    /// Google `Description` (the orderId).
    public var orderId: String?
    /// Google `Sku Id`; Apple `Vendor Identifier`.
    public var productId: String?
    /// Google `Product id`: the package name (the account's file holds every app's rows).
    public var package: String?
    /// `Buyer Country` / `Country Of Sale`, ISO 3166-1 alpha-2.
    public var country: String?
    /// Google: `Transaction Date` and `Transaction Time` (US Pacific).
    public var bookedAt: Date?
    /// Google `Refund Type` (`Full`, `Partial`).
    public var refundType: String?
    /// Apple `Quantity` (negative on returns).
    public var quantity: Int?
    /// Google `Buyer Currency`; Apple `Customer Currency`.
    public var amountCurrency: String?
    /// Google `Amount (Buyer Currency)`; Apple `Customer Price` (per unit). Exact nanos.
    public var amountNanos: Int64?
    /// Google `Merchant Currency`; Apple `Partner Share Currency`.
    public var merchantCurrency: String?
    /// Google `Amount (Merchant Currency)`; Apple `Extended Partner Share`. Exact nanos.
    public var merchantNanos: Int64?

    /// Creates a row.
    public init(
        line: Int, kind: String, orderId: String? = nil, productId: String? = nil, country: String? = nil,
        bookedAt: Date? = nil, refundType: String? = nil, quantity: Int? = nil, amountCurrency: String? = nil,
        amountNanos: Int64? = nil, merchantCurrency: String? = nil, merchantNanos: Int64? = nil,
        package: String? = nil
    ) {
        self.package = package
        self.line = line
        self.kind = kind
        self.orderId = orderId
        self.productId = productId
        self.country = country
        self.bookedAt = bookedAt
        self.refundType = refundType
        self.quantity = quantity
        self.amountCurrency = amountCurrency
        self.amountNanos = amountNanos
        self.merchantCurrency = merchantCurrency
        self.merchantNanos = merchantNanos
    }
}
