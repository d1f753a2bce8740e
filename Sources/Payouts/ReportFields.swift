import Foundation

/// Reads the values of one report row by column, turning each bad value into an error that names the file, line
/// and column.
struct ReportFields {
    /// A column: its name (for errors) and its position (`nil` when the header lacks it).
    struct Column {
        let name: String
        let index: Int?
    }

    let file: String
    let line: Int
    let columns: [String: Int]
    let record: DelimitedText.Record

    /// The column called `name` in this file's header. A format whose header must be exactly its columns (Google's)
    /// names them by position instead: no hashing for each value of a million rows.
    func column(_ name: String) -> Column { Column(name: name, index: columns[name]) }

    /// The raw value (trimmed of surrounding spaces and tabs); empty when the row or header lacks the column.
    func text(_ column: Column) -> String {
        guard let index = column.index, index < record.count else { return "" }
        return record.trimmed(index)
    }

    /// The raw value of `name`.
    func text(_ name: String) -> String { text(column(name)) }

    /// `value` without leading and trailing ASCII spaces and tabs; the same string when it has none (the common case
    /// costs two byte reads, not Foundation's character-set walk).
    static func trimmed(_ value: String) -> String {
        let utf8 = value.utf8
        guard let first = utf8.first, let last = utf8.last else { return value }
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        guard blank(first) || blank(last) else { return value }
        guard let start = utf8.firstIndex(where: { !blank($0) }), let end = utf8.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(value[start...end])
    }

    /// The value, or `nil` when empty.
    func optional(_ column: Column) -> String? {
        let value = text(column)
        return value.isEmpty ? nil : value
    }

    /// The value of `name`, or `nil` when empty.
    func optional(_ name: String) -> String? { optional(column(name)) }

    /// An error at the column.
    func error(_ column: Column, _ problem: String) -> PayoutError {
        PayoutError(
            .badFile, "\(column.name): \(problem)", file: file, line: line, column: column.index.map { $0 + 1 })
    }

    /// An error at `name`'s column.
    func error(_ name: String, _ problem: String) -> PayoutError { error(column(name), problem) }

    /// A decimal amount (`-4.99`, `1200`) as exact nanos.
    func nanos(_ column: Column) throws -> Int64 {
        let value = text(column)
        guard let nanos = Self.nanos(value) else {
            // A well-formed amount past what a line holds (nanos in 64 bits): said as such, not as a bad number.
            let problem =
                Self.isBeyondRange(value)
                ? "\"\(value.prefix(40))\" is beyond the 9,223,372,036.854775807 a line's amount can hold"
                : "expected a decimal number, found \"\(value.prefix(40))\""
            throw error(column, problem)
        }
        return nanos
    }

    /// A decimal amount of `name`.
    func nanos(_ name: String) throws -> Int64 { try nanos(column(name)) }

    /// A whole number.
    func integer(_ name: String) throws -> Int {
        let value = text(name)
        guard let number = Int(value) else {
            throw error(name, "expected a whole number, found \"\(value.prefix(40))\"")
        }
        return number
    }

    /// An ISO 4217 currency code.
    func currency(_ column: Column) throws -> String {
        let value = text(column)
        guard CurrencyCode.isKnown(value) else {
            throw error(column, "unknown currency \"\(value.prefix(40))\" (expected an ISO 4217 code such as USD)")
        }
        return value
    }

    /// The currency of `name`.
    func currency(_ name: String) throws -> String { try currency(column(name)) }

    /// An ISO 3166-1 alpha-2 country code (upper-cased), or `nil` when empty.
    func country(_ column: Column) throws -> String? {
        let value = text(column)
        if value.isEmpty { return nil }
        let letters = Array(value.utf8)
        guard letters.count == 2, letters.allSatisfy({ (0x41...0x5A).contains($0 & 0xDF) }) else {
            throw error(column, "expected a two-letter country code, found \"\(value.prefix(40))\"")
        }
        return letters.allSatisfy({ $0 < 0x5B }) ? value : value.uppercased()
    }

    /// The country of `name`.
    func country(_ name: String) throws -> String? { try country(column(name)) }

    /// Whether `text` is a decimal number `nanos` refuses only for its size: more than 9 digits before the point.
    static func isBeyondRange(_ text: String) -> Bool {
        let unsigned = text.drop { $0 == "-" || $0 == "+" }
        let whole = unsigned.prefix { $0 != "." }
        return whole.count > 9 && whole.allSatisfy { ("0"..."9").contains($0) }
            && nanos("0" + unsigned.dropFirst(whole.count)) != nil
    }

    /// Parses `-12.345` into nanos; at most 9 decimals, no exponent, no thousands separator.
    static func nanos(_ text: String) -> Int64? {
        var utf8 = Substring(text).utf8
        var negative = false
        if let sign = utf8.first, sign == 0x2D || sign == 0x2B {
            negative = sign == 0x2D
            utf8 = utf8.dropFirst()
        }
        var units: Int64 = 0
        var fraction: Int64 = 0
        var fractionDigits = 0
        var digits = 0
        var seenPoint = false
        for byte in utf8 {
            if byte == 0x2E {
                guard !seenPoint else { return nil }
                seenPoint = true
                continue
            }
            guard (0x30...0x39).contains(byte) else { return nil }
            let digit = Int64(byte - 0x30)
            digits += 1
            if seenPoint {
                fractionDigits += 1
                guard fractionDigits <= 9 else { return nil }
                fraction = fraction * 10 + digit
            } else {
                let (times, overflow) = units.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(digit)
                guard !overflow, !overflowSum else { return nil }
                units = sum
            }
        }
        guard digits > 0 else { return nil }
        for _ in fractionDigits..<9 { fraction *= 10 }
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowSum) = scaled.addingReportingOverflow(fraction)
        guard !overflow, !overflowSum else { return nil }
        return negative ? -sum : sum
    }
}
