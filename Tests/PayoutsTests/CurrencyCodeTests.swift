import Testing

@testable import Payouts

/// The currency check by table agrees with the list of codes: every code known, nothing else.
@Suite struct CurrencyCodeTests {
    @Test func everyListedCodeIsKnown() {
        #expect(CurrencyCode.known.count > 150)
        #expect(CurrencyCode.known.allSatisfy(CurrencyCode.isKnown))
        #expect(CurrencyCode.isKnown("ZWG") && CurrencyCode.isKnown("XCG"), "codes added to ISO 4217 in 2024 and 2025")
    }

    @Test(arguments: ["", "US", "USDD", "usd", "Usd", "XXY", "USX", "ÜSD", "U D", "AAA", "ZZZ", "US\u{0}"])
    func anythingElseIsNot(code: String) {
        #expect(!CurrencyCode.isKnown(code))
    }
}
