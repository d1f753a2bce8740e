/// ISO 4217 currency codes: a report's currency must be one of them.
enum CurrencyCode {
    /// Every active ISO 4217 alphabetic code (from Debian's iso-codes).
    static let known: Set<String> = [
        "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BGN", "BHD",
        "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHE", "CHF",
        "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD",
        "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD",
        "HNL", "HRK", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS",
        "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL",
        "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN",
        "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD",
        "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL", "SOS", "SRD", "SSP", "STN",
        "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD",
        "USN", "UYI", "UYU", "UYW", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XBA", "XBB",
        "XBC", "XBD", "XCD", "XDR", "XOF", "XPD", "XPF", "XPT", "XSU", "XTS", "XUA", "XXX", "YER", "ZAR", "ZMW",
        "ZWL",
        // Added to ISO 4217 since that list: the Zimbabwe Gold (2024) and the Caribbean guilder (2025).
        "XCG", "ZWG",
    ]

    /// ``known`` as a table indexed by the code's three letters: a report checks two codes a row, and hashing each
    /// into the set was a twentieth of an import's CPU.
    private static let table: [Bool] = {
        var table = [Bool](repeating: false, count: 26 * 26 * 26)
        for code in known { table[slot(code)!] = true }
        return table
    }()

    /// The slot of three upper-case ASCII letters; nil for anything else.
    private static func slot(_ code: String) -> Int? {
        var utf8 = code.utf8.makeIterator()
        var slot = 0
        for _ in 0..<3 {
            guard let letter = utf8.next(), (0x41...0x5A).contains(letter) else { return nil }
            slot = slot * 26 + Int(letter - 0x41)
        }
        return utf8.next() == nil ? slot : nil
    }

    /// Whether `code` is an active ISO 4217 code.
    static func isKnown(_ code: String) -> Bool {
        slot(code).map { table[$0] } ?? false
    }
}
