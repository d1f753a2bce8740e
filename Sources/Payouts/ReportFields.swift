import Foundation

/// Reads the values of one report row by column name, turning each bad value into an error that names the file,
/// line and column.
struct ReportFields {
    let file: String
    let line: Int
    let columns: [String: Int]
    let fields: [String]

    /// The raw value of `name` (trimmed of surrounding spaces).
    func text(_ name: String) -> String {
        guard let index = columns[name], index < fields.count else { return "" }
        return fields[index].trimmingCharacters(in: .whitespaces)
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
        guard value.count == 2, value.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw error(name, "expected a two-letter country code, found \"\(value.prefix(40))\"")
        }
        return value.uppercased()
    }

    /// Parses `-12.345` into nanos; at most 9 decimals, no exponent, no thousands separator.
    static func nanos(_ text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if digits.first == "-" || digits.first == "+" {
            negative = digits.first == "-"
            digits = digits.dropFirst()
        }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty || parts.count == 2,
            whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= 9, fraction.allSatisfy({ $0.isASCII && $0.isNumber }),
            !(whole.isEmpty && fraction.isEmpty)
        else { return nil }
        guard let units = Int64(whole.isEmpty ? "0" : String(whole)),
            let fractionValue = Int64(fraction + String(repeating: "0", count: 9 - fraction.count))
        else { return nil }
        let (scaled, overflow) = units.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowSum) = scaled.addingReportingOverflow(fractionValue)
        guard !overflow, !overflowSum else { return nil }
        return negative ? -sum : sum
    }
}
