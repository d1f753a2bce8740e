import Foundation
import PlayDeveloperAPI
import Testing

@testable import Ledger

/// The amount rule, alone (no database): an estimate while the store states nothing, the store's amount replacing an
/// estimate, never the reverse; and the one estimate every statement looks up.
@Suite struct RefundAmountRuleTests {
    typealias Rule = RefundAmountRule

    @Test(arguments: [
        // (stored, offer, decision), worked out by hand from the rule.
        (AmountSource?.none, Rule.Offer.stated, Rule.Decision.replace),
        (.configured, .stated, .replace),
        (.store, .stated, .replace),
        (nil, .overRefunded, .replace),
        (.configured, .overRefunded, .replace),
        (.store, .overRefunded, .replace),
        (nil, .estimate, .replace),
        (.configured, .estimate, .replace),
        (.store, .estimate, .keep),
        (nil, .voidedRow, .fillMissing),
        (.configured, .voidedRow, .fillMissing),
        (.store, .voidedRow, .keep),
    ])
    func eachStoredAmountAndOffer(stored: AmountSource?, offer: Rule.Offer, expected: Rule.Decision) {
        #expect(Rule.decide(stored: stored, offer: offer) == expected)
    }

    @Test func aGoogleVoidedRowOffersNothingEveryOtherRecordIsTheStoresWord() {
        #expect(Rule.offer(platform: .google, revoked: true) == .voidedRow)
        #expect(Rule.offer(platform: .google, revoked: false) == .stated)
        #expect(Rule.offer(platform: .apple, revoked: true) == .stated)
        #expect(Rule.offer(platform: .apple, revoked: false) == .stated)
        // A voided row priced ahead from its order carries the store's amount.
        #expect(Rule.offer(platform: .google, revoked: true, storeAmount: true) == .stated)
    }

    static func price(gross: Int64?, note: AmountNote?, currency: String? = "USD", quantity: Int = 2)
        -> GoogleOrderPricing.PartPrice
    {
        GoogleOrderPricing.PartPrice(
            rowId: 7, gross: gross, tax: gross.map { _ in 100 }, currency: currency, quantity: quantity, note: note)
    }

    @Test func anOrdersAnswerStatesEstimatesOrClearsOverRefunds() {
        #expect(Rule.offer(of: Self.price(gross: 1_980_000_000, note: nil)) == .stated)
        #expect(Rule.offer(of: Self.price(gross: nil, note: .pending)) == .estimate)
        #expect(Rule.offer(of: Self.price(gross: nil, note: .noRefundEvent)) == .estimate)
        #expect(Rule.offer(of: Self.price(gross: nil, note: .overRefunded)) == .overRefunded)
    }

    /// coins: USD 0.99 or EUR 0.90; gem: JPY 150 only.
    static let prices = ConfiguredPrices(["coins": ["USD": 990, "EUR": 900], "gem": ["JPY": 150_000]])

    @Test func theStoresAmountIsWrittenAsStated() {
        let amount = Rule.OrderAmount(
            Self.price(gross: 1_980_000_000, note: nil), productId: "coins", prices: Self.prices)
        #expect(amount.gross == 1_980_000_000 && amount.tax == 100 && amount.precision == 9)
        #expect(amount.source == .store && amount.unit == nil && amount.currency == "USD" && amount.note == nil)
    }

    @Test func withoutTheStoresAmountTheEstimateStandsIn() {
        // 2 coins sold in EUR: 2 x 0.900 EUR, in milliunits.
        let euro = Rule.OrderAmount(
            Self.price(gross: nil, note: .pending, currency: "EUR"), productId: "coins", prices: Self.prices)
        #expect(euro.gross == 1800 && euro.precision == 3 && euro.source == .configured)
        #expect(euro.currency == "EUR" && euro.unit == 900 && euro.note == .pending)
        // A gem sold in an unknown currency: its only price, JPY 150 each.
        let gem = Rule.OrderAmount(
            Self.price(gross: nil, note: nil, currency: nil, quantity: 1), productId: "gem", prices: Self.prices)
        #expect(gem.gross == 150_000 && gem.currency == "JPY" && gem.source == .configured)
    }

    @Test func noEstimateInACurrencyWithoutAPriceAndNoneForAnOverRefund() {
        let yen = Rule.OrderAmount(
            Self.price(gross: nil, note: nil, currency: "JPY"), productId: "coins", prices: Self.prices)
        #expect(yen.gross == nil && yen.source == nil && yen.note == .noConfiguredPrice && yen.currency == "JPY")
        // Pending keeps its note: the store will say.
        let pending = Rule.OrderAmount(
            Self.price(gross: nil, note: .pending, currency: "JPY"), productId: "coins", prices: Self.prices)
        #expect(pending.gross == nil && pending.note == .pending)
        let over = Rule.OrderAmount(
            Self.price(gross: nil, note: .overRefunded), productId: "coins", prices: Self.prices)
        #expect(over.gross == nil && over.source == nil && over.note == .overRefunded)
    }

    @Test func theStatementsLookUpTheSameEstimates() {
        let estimates = Self.prices.estimates
        let rows = (0..<estimates.products.count).map {
            "\(estimates.products[$0]) \(estimates.sales[$0] ?? "?") -> \(estimates.currencies[$0]) \(estimates.prices[$0])"
        }
        // coins has two prices: no estimate for an unknown currency; gem's only price stands for any.
        #expect(
            rows == ["coins EUR -> EUR 900", "coins USD -> USD 990", "gem JPY -> JPY 150000", "gem ? -> JPY 150000"])
    }

    @Test func theSQLIsTheRulesDecisions() {
        #expect(Rule.decisionSQL(stored: "r.s", fixed: .stated) == "'replace'")
        #expect(
            Rule.decisionSQL(stored: "r.s", fixed: .estimate)
                == "CASE WHEN r.s = 'store' THEN 'keep' ELSE 'replace' END")
        #expect(
            Rule.decisionSQL(stored: "r.s", fixed: .voidedRow)
                == "CASE WHEN r.s = 'store' THEN 'keep' ELSE 'fill_missing' END")
    }

    @Test func aRecordTakesOnlyTheStoresAmount() throws {
        let page = try VoidedPurchasesListResponse(
            json: Data(#"{"voidedPurchases":[{"purchaseToken":"t","orderId":"GPA.1","voidedTimeMillis":"1000"}]}"#.utf8)
        )
        var record = try #require(RefundRecord.intake(page, receivedAt: Date()).records.first)
        let order = try JSONDecoder().decode(PlayOrder.self, from: Data(#"{"orderId":"GPA.1"}"#.utf8))
        var unpriced = record
        unpriced.take(Self.price(gross: nil, note: .pending), of: order)
        #expect(unpriced == record)
        record.take(Self.price(gross: 4_990_000_000, note: nil, quantity: 1), of: order)
        #expect(record.amount == .stated(gross: 4_990_000_000, tax: 100, precision: 9))
        #expect(record.currency == "USD" && record.quantity == 1 && record.priceMilli == nil)
    }
}
