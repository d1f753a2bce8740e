import Foundation
import Reports
import Testing

/// Money: amounts exact, in each currency's ISO 4217 minor units. Pure: no database (these cases ran in the database
/// suite, which made a database for each of its 130 cases).
@Suite("Money: exact amounts in minor units")
struct MoneyTests {
    /// ISO 4217 minor units, written out here from the standard (not read from storerecon's table), for every
    /// currency Apple's App Store or Google Play sells in.
    static let iso4217: [String: Int] = [
        "AED": 2, "ALL": 2, "AMD": 2, "ARS": 2, "AUD": 2, "AZN": 2, "BAM": 2, "BDT": 2, "BGN": 2, "BHD": 3, "BIF": 0,
        "BOB": 2, "BRL": 2, "BWP": 2, "BYN": 2, "CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2, "COP": 2, "CRC": 2, "CZK": 2,
        "DJF": 0, "DKK": 2, "DOP": 2, "DZD": 2, "EGP": 2, "ETB": 2, "EUR": 2, "GBP": 2, "GEL": 2, "GHS": 2, "GNF": 0,
        "GTQ": 2, "HKD": 2, "HNL": 2, "HUF": 2, "IDR": 2, "ILS": 2, "INR": 2, "IQD": 3, "ISK": 0, "JMD": 2, "JOD": 3,
        "JPY": 0, "KES": 2, "KGS": 2, "KHR": 2, "KMF": 0, "KRW": 0, "KWD": 3, "KZT": 2, "LAK": 2, "LBP": 2, "LKR": 2,
        "LYD": 3, "MAD": 2, "MDL": 2, "MKD": 2, "MMK": 2, "MNT": 2, "MOP": 2, "MUR": 2, "MXN": 2, "MYR": 2, "MZN": 2,
        "NAD": 2, "NGN": 2, "NIO": 2, "NOK": 2, "NPR": 2, "NZD": 2, "OMR": 3, "PAB": 2, "PEN": 2, "PHP": 2, "PKR": 2,
        "PLN": 2, "PYG": 0, "QAR": 2, "RON": 2, "RSD": 2, "RUB": 2, "RWF": 0, "SAR": 2, "SEK": 2, "SGD": 2, "THB": 2,
        "TJS": 2, "TND": 3, "TRY": 2, "TTD": 2, "TWD": 2, "TZS": 2, "UAH": 2, "UGX": 0, "USD": 2, "UYU": 2, "UZS": 2,
        "VES": 2, "VND": 0, "XAF": 0, "XCD": 2, "XOF": 0, "XPF": 0, "YER": 2, "ZAR": 2, "ZMW": 2,
    ]

    @Test(arguments: iso4217.keys.sorted())
    func everyStoreCurrencyPrintsInItsMinorUnits(_ currency: String) throws {
        let exponent = try #require(Self.iso4217[currency])
        #expect(Money.exponent(of: currency) == exponent)
        // 1234.5 + one half of the last minor unit, plus a remainder beyond it, in nanos: rounds up at every exponent.
        let text = Money.format(nanos: Decimal(1_234_567_891_000), currency: currency)
        let expected = [0: "1235", 2: "1234.57", 3: "1234.568"][exponent]
        #expect(text == expected)
        #expect(text.split(separator: ".").dropFirst().first?.count ?? 0 == exponent)
    }

    @Test(arguments: [
        (Decimal(125_000_000), "USD", "0.12"), (Decimal(135_000_000), "USD", "0.14"), (Decimal(0), "EUR", "0.00"),
        (Decimal(500_000_000), "JPY", "0"), (Decimal(1_500_000_000), "JPY", "2"),
        (Decimal(1_000_500_000), "KWD", "1.000"),
        (Decimal(1_001_500_000), "KWD", "1.002"), (Decimal(-125_000_000), "USD", "-0.12"),
        (Decimal(string: "123456789012345678901234567890")!, "USD", "123456789012345678901.23"),
        (Decimal(1_234_500_000), "XYZ", "1.2345"), (Decimal(1_000_000_000), "XYZ", "1.00"),
    ])
    func roundingIsHalfToEvenOnceAtTheEnd(_ nanos: Decimal, _ currency: String, _ text: String) {
        #expect(Money.format(nanos: nanos, currency: currency) == text)
    }

    @Test func numericTextParsesExactly() {
        #expect(Money.nanos(text: "1182326000000") == Decimal(1_182_326_000_000))
        #expect(Money.nanos(text: "12.000") == Decimal(12))
        #expect(Money.nanos(text: "1.5") == nil)
        #expect(Money.nanos(text: "abc") == nil)
    }

    @Test(arguments: [
        (10990, "10.99"), (5495, "5.495"), (0, "0.00"), (-1000, "-1.00"), (1, "0.001"),
        (Int64.max, "9223372036854775.807"),
    ])
    func moneyIsExact(_ milli: Int64, _ text: String) {
        #expect(Money.units(milli) == text)
    }
}
