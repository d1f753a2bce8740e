import Foundation

/// Reads the values of one report row by column name, turning each bad value into an error that names the file,
/// line and column.
struct ReportFields {
    let file: String
    let line: Int
    let columns: [String: Int]
    let fields: [String]

    /// The raw value of `name` (trimmed of surrounding spaces and tabs).
    func text(_ name: String) -> String {
        guard let index = columns[name], index < fields.count else { return "" }
        return Self.trimmed(fields[index])
    }

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
    func optional(_ name: String) -> String? {
        let value = text(name)
        return value.isEmpty ? nil : value
    }

    /// An error at `name`'s column.
    func error(_ name: String, _ problem: String) -> PayoutError {
        PayoutError(
            .badFile, "\(name): \(problem)", file: file, line: line, column: columns[name].map { $0 + 1 })
    }

    /// A decimal amount (`-4.99`, `1200`) as exact nanos.
    func nanos(_ name: String) throws -> Int64 {
        let value = text(name)
        guard let nanos = Self.nanos(value) else {
            throw error(name, "expected a decimal number, found \"\(value.prefix(40))\"")
        }
        return nanos
    }

    /// A whole number.
    func integer(_ name: String) throws -> Int {
        let value = text(name)
        guard let number = Int(value) else {
            throw error(name, "expected a whole number, found \"\(value.prefix(40))\"")
        }
        return number
    }

    /// An ISO 4217 currency code.
    func currency(_ name: String) throws -> String {
        let value = text(name)
        guard CurrencyCode.known.contains(value) else {
            throw error(name, "unknown currency \"\(value.prefix(40))\" (expected an ISO 4217 code such as USD)")
        }
        return value
    }

    /// An ISO 3166-1 alpha-2 country code (upper-cased), or `nil` when empty.
    func country(_ name: String) throws -> String? {
        let value = text(name)
        if value.isEmpty { return nil }
        let letters = Array(value.utf8)
        guard letters.count == 2, letters.allSatisfy({ (0x41...0x5A).contains($0 & 0xDF) }) else {
            throw error(name, "expected a two-letter country code, found \"\(value.prefix(40))\"")
        }
        return letters.allSatisfy({ $0 < 0x5B }) ? value : value.uppercased()
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
