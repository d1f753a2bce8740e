import Foundation

/// Exact money.
///
/// The ledger keeps every amount as an integer in the store's own precision (`amount_precision` decimal digits:
/// 3 for Apple milliunits, 8 for an Apple prorated refund (milliunits x milli-percent), 9 for Google `Money`
/// `units` + `nanos`). Reports read them as exact nanos (10^-9 of a unit), round **each entry** to the currency's
/// ISO 4217 minor unit, half to even ("banker's rounding": 0.125 USD -> 0.12, 0.135 -> 0.14), and then add, so
/// every printed total is the sum of the printed rows. No binary floating point is used anywhere; `Decimal` holds
/// 38 significant digits, so totals are exact up to 10^29 units.
public enum Money {
    /// Formats milliunits as units with at least two decimals: 10990 → "10.99", 5495 → "5.495", -1000 → "-1.00".
    /// Used for raw store values (prices, percentages), never for report totals, which use ``format(nanos:currency:)``.
    public static func units(_ milli: Int64) -> String {
        let negative = milli < 0
        let magnitude = milli.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        if decimals.hasSuffix("0") { decimals.removeLast() }
        return (negative ? "-" : "") + "\(whole).\(decimals)"
    }

    /// ISO 4217 minor-unit exponents of every currency Apple's App Store or Google Play charges buyers in (and a
    /// few neighbours). A currency not listed is printed exactly, unrounded (see ``format(nanos:currency:)``).
    public static let minorUnits: [String: Int] = {
        var table: [String: Int] = [:]
        for code in zeroDecimalCurrencies { table[code] = 0 }
        for code in threeDecimalCurrencies { table[code] = 3 }
        for code in twoDecimalCurrencies { table[code] = 2 }
        return table
    }()

    /// ISO 4217 exponent 0.
    static let zeroDecimalCurrencies = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
        "XOF", "XPF",
    ]
    /// ISO 4217 exponent 3.
    static let threeDecimalCurrencies = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
    /// ISO 4217 exponent 2: the rest of the currencies the two stores sell in.
    static let twoDecimalCurrencies = [
        "AED", "ALL", "AMD", "ARS", "AUD", "AZN", "BAM", "BDT", "BGN", "BOB", "BRL", "BYN", "BWP", "CAD", "CHF", "CNY",
        "COP", "CRC", "CZK", "DKK", "DOP", "DZD", "EGP", "ETB", "EUR", "GBP", "GEL", "GHS", "GTQ", "HKD", "HNL", "HUF",
        "IDR", "ILS", "INR", "JMD", "KES", "KGS", "KHR", "KZT", "LAK", "LBP", "LKR", "MAD", "MDL", "MKD", "MMK", "MNT",
        "MOP", "MUR", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "PAB", "PEN", "PHP", "PKR", "PLN",
        "QAR", "RON", "RSD", "RUB", "SAR", "SEK", "SGD", "THB", "TJS", "TRY", "TTD", "TWD", "TZS", "UAH", "USD", "UYU",
        "UZS", "VES", "XCD", "YER", "ZAR", "ZMW",
    ]

    /// The ISO 4217 minor-unit exponent of `currency`, or `nil` when the table does not know it.
    public static func exponent(of currency: String) -> Int? { minorUnits[currency.uppercased()] }

    /// Exact nanos rounded half to even to `currency`'s minor unit, still in nanos (1234567891000 nanos of USD ->
    /// 1234570000000); a currency outside ``minorUnits`` is left exact.
    public static func rounded(nanos: Decimal, currency: String) -> Decimal {
        guard let exponent = exponent(of: currency) else { return nanos }
        var scaled = nanos / power(9 - exponent)
        var whole = Decimal()
        NSDecimalRound(&whole, &scaled, 0, .bankers)
        return whole * power(9 - exponent)
    }

    /// An integer amount in `precision` decimal digits, as exact nanos.
    public static func nanos(_ amount: Int64, precision: Int) -> Decimal {
        var value = Decimal(amount)
        for _ in 0..<max(0, 9 - precision) { value *= 10 }
        return value
    }

    /// Parses an integer count of nanos as PostgreSQL prints a `numeric` (e.g. `"1182326000000"`); `nil` for
    /// anything else.
    public static func nanos(text: String) -> Decimal? {
        var digits = Substring(text)
        if digits.hasSuffix(".0") || digits.contains(".") {
            guard let dot = digits.firstIndex(of: "."), digits[digits.index(after: dot)...].allSatisfy({ $0 == "0" })
            else { return nil }
            digits = digits[..<dot]
        }
        let body = digits.hasPrefix("-") ? digits.dropFirst() : digits
        guard !body.isEmpty, body.allSatisfy(\.isASCII), body.allSatisfy(\.isNumber) else { return nil }
        return Decimal(string: String(digits), locale: Locale(identifier: "en_US_POSIX"))
    }

    /// Formats exact nanos in `currency`'s minor units, rounding half to even: 1182326000000 nanos of EUR →
    /// "1182.33", of JPY → "1182", of KWD → "1182.326". A currency outside ``minorUnits`` is printed exactly
    /// (all the digits the amount has, at least two).
    public static func format(nanos: Decimal, currency: String) -> String {
        guard let exponent = exponent(of: currency) else {
            // Exact: the fewest decimals (at least two) that hold the value.
            for decimals in 2...9 {
                let text = fixed(nanos, decimals: decimals)
                if let back = parse(text), back * power(9) == nanos { return text }
            }
            return fixed(nanos, decimals: 9)
        }
        return fixed(nanos, decimals: exponent)
    }

    /// `nanos` as units with exactly `decimals` decimals, rounded half to even.
    static func fixed(_ nanos: Decimal, decimals: Int) -> String {
        // Scaled to the wanted unit (10^-decimals), then rounded half-even to an integer: exact in Decimal.
        var scaled = nanos / power(9 - decimals)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .bankers)
        let negative = rounded < 0
        var digits = (negative ? -rounded : rounded).description
        if decimals > 0 {
            if digits.count <= decimals { digits = String(repeating: "0", count: decimals - digits.count + 1) + digits }
            digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -decimals))
        }
        return (negative ? "-" : "") + digits
    }

    static func power(_ exponent: Int) -> Decimal {
        var value = Decimal(1)
        for _ in 0..<max(0, exponent) { value *= 10 }
        return value
    }

    static func parse(_ text: String) -> Decimal? { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) }
}
