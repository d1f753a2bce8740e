import Foundation

/// Exchange rates supplied by finance for `report refunds --rates FILE`: CSV `date,currency,rate_to_<BASE>`, one
/// rate per day and currency: one unit of `currency` is worth `rate` units of `BASE` on `date` (`YYYY-MM-DD`, the
/// report's days). Rates are exact decimals (no floating point); a currency equal to the base needs no row.
public struct RefundRates: Sendable, Equatable {
    /// The reporting currency (from the header's `rate_to_<BASE>`).
    public var base: String
    /// Rates by day, then currency.
    public var rates: [String: [String: Decimal]]

    /// Creates a table.
    public init(base: String, rates: [String: [String: Decimal]]) {
        self.base = base
        self.rates = rates
    }

    /// Parses the CSV text.
    /// - Throws: `ReportError` naming the line and what is wrong.
    public static func parse(_ text: String) throws -> RefundRates {
        // A spreadsheet's "CSV UTF-8" starts with a byte-order mark.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let header = lines.first?.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }),
            header.count == 3, header[0] == "date", header[1] == "currency", header[2].hasPrefix("rate_to_")
        else { throw ReportError("--rates: the first line must be date,currency,rate_to_<CURRENCY>", code: .input) }
        let base = String(header[2].dropFirst("rate_to_".count)).uppercased()
        guard Self.isCurrency(base) else {
            throw ReportError("--rates: \(header[2]) does not name a currency", code: .input)
        }
        var rates: [String: [String: Decimal]] = [:]
        for (index, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let number = index + 1
            guard fields.count == 3 else {
                throw ReportError("--rates line \(number): expected 3 fields", code: .input)
            }
            let day = fields[0]
            let currency = fields[1].uppercased()
            guard (try? RefundReportOptions(from: day, to: day).validate()) != nil else {
                throw ReportError(
                    "--rates line \(number): \"\(day.prefix(20))\" is not a date YYYY-MM-DD", code: .input)
            }
            guard Self.isCurrency(currency) else {
                throw ReportError(
                    "--rates line \(number): \"\(currency.prefix(10))\" is not a currency code", code: .input)
            }
            guard fields[2].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                fields[2].filter({ $0 == "." }).count <= 1, fields[2].contains(where: \.isNumber),
                let rate = Decimal(string: fields[2], locale: Locale(identifier: "en_US_POSIX")), rate > 0
            else {
                throw ReportError(
                    "--rates line \(number): \"\(fields[2].prefix(30))\" is not a positive rate", code: .input)
            }
            guard rates[day]?[currency] == nil else {
                throw ReportError("--rates line \(number): a second rate for \(currency) on \(day)", code: .input)
            }
            rates[day, default: [:]][currency] = rate
        }
        return RefundRates(base: base, rates: rates)
    }

    static func isCurrency(_ text: String) -> Bool {
        text.count == 3 && text.allSatisfy { $0.isASCII && $0.isUppercase }
    }

    /// The rate of `currency` on `day` (1 for the base currency).
    /// - Throws: `ReportError` naming the day and currency when the file has none.
    public func rate(day: String, currency: String) throws -> Decimal {
        if currency == base { return 1 }
        guard let rate = rates[day]?[currency] else {
            throw ReportError(
                "--rates: no rate for \(currency) on \(day) (add a line \(day),\(currency),<rate>)", code: .input)
        }
        return rate
    }
}
