import Foundation
import Ledger
import PlayDeveloperAPI
import Testing

/// The order pricing rule against order histories written out by hand; every expected amount is worked out in the
/// comment beside it, in the currency's units (nanos: units x 10^9).
@Suite("Google order pricing")
struct GoogleOrderPricingTests {
    typealias Part = GoogleOrderPricing.VoidedPart
    static let t0: Int64 = 1_790_000_000_000
    static let minute: Int64 = 60_000
    static let day: Int64 = 86_400_000

    static func price(_ builder: OrderHistoryBuilder, _ parts: [Part]) throws -> GoogleOrderPricing.Priced {
        GoogleOrderPricing.price(try builder.order(), voided: parts, payload: try builder.json())
    }

    static func part(_ priced: GoogleOrderPricing.Priced, _ rowId: Int64) throws -> GoogleOrderPricing.PartPrice {
        try #require(priced.parts.first { $0.rowId == rowId })
    }

    /// Item 1: 7 units for GBP 6.93 (0.99 each, VAT 20 % included: tax 1.155), refunded 2 units, 2 units, then the
    /// rest in full. The rest is 6.93 - 1.98 - 1.98 = 2.97 for 3 units, tax 1.155 - 0.33 - 0.33 = 0.495, whether
    /// Google states the full refund as cumulative (6.93) or as what it gave back then (2.97).
    @Test(arguments: [("6.93", "1.155"), ("2.97", "0.495")])
    func aFullRefundAfterQuantityPartsGivesBackWhatRemained(refundTotal: String, refundTax: String) throws {
        var order = OrderHistoryBuilder(currency: "GBP", total: "6.93", tax: "1.155", quantity: 7)
        order.partial("1.98", tax: "0.33", created: Self.t0 + 2000)
        order.partial("1.98", tax: "0.33", created: Self.t0 + 5 * Self.minute + 3000)
        order.fullRefund(refundTotal, tax: refundTax, at: Self.t0 + 10 * Self.minute + 4000)
        let priced = try Self.price(
            order,
            [
                Part(rowId: 1, units: 2, voidedMillis: Self.t0),
                Part(rowId: 2, units: 2, voidedMillis: Self.t0 + 5 * Self.minute),
                Part(rowId: 3, units: nil, voidedMillis: Self.t0 + 10 * Self.minute),
            ])
        #expect(priced.overRefund == nil)
        #expect(try Self.part(priced, 1).gross == 1_980_000_000)
        #expect(try Self.part(priced, 2).gross == 1_980_000_000)
        let rest = try Self.part(priced, 3)
        #expect(rest.gross == 2_970_000_000)
        #expect(rest.tax == 495_000_000)
        #expect(rest.quantity == 3)
        #expect(priced.unrevoked.isEmpty)
    }

    /// Item 2: 3 units for EUR 3.57 (1.19 each). Only the later refund of 2 units (EUR 2.38) is in the ledger; the
    /// refund of 1 unit before it is not. The part takes the 2.38 event, and the 1.19 one is a refund of its own.
    @Test func aPartTakesItsOwnEventWhenAnEarlierPartIsMissing() throws {
        var order = OrderHistoryBuilder(currency: "EUR", total: "3.57", tax: "0.57", quantity: 3)
        order.partial("1.19", tax: "0.19", created: Self.t0 + 1500)
        order.partial("2.38", tax: "0.38", created: Self.t0 + 3 * Self.minute + 2500)
        let priced = try Self.price(order, [Part(rowId: 7, units: 2, voidedMillis: Self.t0 + 3 * Self.minute)])
        #expect(try Self.part(priced, 7).gross == 2_380_000_000)
        #expect(try Self.part(priced, 7).tax == 380_000_000)
        #expect(priced.unrevoked.count == 1)
        #expect(priced.unrevoked.first?.amount == .stated(gross: 1_190_000_000, tax: 190_000_000, precision: 9))
        #expect(priced.unrevoked.first?.kind == .partialAmount)
        #expect(priced.unrevoked.first?.revokes == false)
    }

    /// Item 2, the swap: JPY 480 for 3 units (160 each); 1 unit voided at t, 2 units two seconds later. Google's
    /// events: 320 created 1.5 s after t, 160 created 3 s after t. Nearest in time alone would give the 1-unit part
    /// the 320; the amounts say 160 for 1 unit and 320 for 2.
    @Test func eventsCloseInTimeGoToThePartTheirAmountFits() throws {
        var order = OrderHistoryBuilder(currency: "JPY", total: "480", tax: "43", quantity: 3)
        order.partial("320", tax: "29", created: Self.t0 + 1500)
        order.partial("160", tax: "14", created: Self.t0 + 3000)
        let priced = try Self.price(
            order,
            [Part(rowId: 1, units: 1, voidedMillis: Self.t0), Part(rowId: 2, units: 2, voidedMillis: Self.t0 + 2000)])
        #expect(try Self.part(priced, 1).gross == 160_000_000_000)
        #expect(try Self.part(priced, 2).gross == 320_000_000_000)
        #expect(priced.unrevoked.isEmpty)
    }

    /// Item 3: KRW 9000 for 2 units (4500 each). A goodwill refund of KRW 1800 (no voided row), then 1 unit refunded
    /// (KRW 4500, its voided row in the ledger). The goodwill event lies nearer the part's time, but 1800 is not a
    /// unit's price: the part takes 4500 and the 1800 is recorded as a partial refund by amount, not revoked.
    @Test func aPartialRefundByAmountIsRecordedBesideQuantityParts() throws {
        var order = OrderHistoryBuilder(currency: "KRW", total: "9000", tax: "818", quantity: 2)
        order.partial("1800", tax: "164", created: Self.t0 - 2000, processDelay: 1000)
        order.partial("4500", tax: "409", created: Self.t0 + 20_000)
        let priced = try Self.price(order, [Part(rowId: 4, units: 1, voidedMillis: Self.t0)])
        #expect(try Self.part(priced, 4).gross == 4_500_000_000_000)
        let goodwill = try #require(priced.unrevoked.first)
        #expect(priced.unrevoked.count == 1)
        #expect(goodwill.amount == .stated(gross: 1_800_000_000_000, tax: 164_000_000_000, precision: 9))
        #expect(goodwill.kind == .partialAmount)
        #expect(goodwill.reasonLabel == "not_revoked")
    }

    /// Item 4: USD 4.95 for 5 units (0.99 each). 2 units refunded 40 days ago (outside the voided list's 30 days:
    /// not in the ledger), the rest refunded today (the whole-order row). The old refund is recorded from the order's
    /// history at its own time (USD 1.98), and the rest is 4.95 - 1.98 = 2.97 for 5 - 2 = 3 units. The old refund
    /// took 3 days to process; it is dated when it was made, as its voided row was, not when it was processed.
    @Test func partialRefundsOlderThanTheVoidedWindowAreRecorded() throws {
        var order = OrderHistoryBuilder(currency: "USD", total: "4.95", tax: "0", quantity: 5)
        let old = Self.t0 - 40 * Self.day
        order.partial("1.98", tax: "0", created: old, processDelay: 3 * Self.day)
        order.fullRefund("4.95", tax: "0", at: Self.t0 + 1000)
        let priced = try Self.price(order, [Part(rowId: 9, units: nil, voidedMillis: Self.t0)])
        let rest = try Self.part(priced, 9)
        #expect(rest.gross == 2_970_000_000)
        #expect(rest.quantity == 3)
        let earlier = try #require(priced.unrevoked.first)
        #expect(earlier.amount == .stated(gross: 1_980_000_000, tax: 0, precision: 9))
        #expect(earlier.refundedAt == Date(timeIntervalSince1970: Double(old) / 1000))
        #expect(earlier.part == .orderPartial(createdMillis: old))
    }

    /// An order whose partial refunds add up to more than it charged (GBP 1.50 + 1.00 of 1.99) gives no amount to
    /// any of its rows and says why.
    @Test func anOrderRefundingMoreThanItChargedIsSetAside() throws {
        var order = OrderHistoryBuilder(currency: "GBP", total: "1.99", tax: "0.33", quantity: 1)
        order.partial("1.50", tax: "0.25", created: Self.t0)
        order.partial("1.00", tax: "0.17", created: Self.t0 + Self.minute)
        let priced = try Self.price(order, [Part(rowId: 1, units: nil, voidedMillis: Self.t0)])
        let reason = try #require(priced.overRefund)
        #expect(reason.contains("2.5") && reason.contains("1.99"), "\(reason)")
        #expect(try Self.part(priced, 1).gross == nil)
        #expect(try Self.part(priced, 1).note == .overRefunded)
        #expect(priced.unrevoked.isEmpty)
    }

    /// Figures no order has (two partial refunds of 5,000,000,000 each, more than 64 bits of nanos together; a
    /// voided quantity near Int.max) are an impossible order set aside, not a crash of the run.
    @Test func figuresPastSixtyFourBitsAreSetAsideNotACrash() throws {
        var order = OrderHistoryBuilder(currency: "USD", total: "0.000000001", tax: "0", quantity: 1)
        order.partial("5000000000", tax: "0", created: Self.t0)
        order.partial("5000000000", tax: "0", created: Self.t0 + Self.minute)
        order.fullRefund("9000000000", tax: "0", at: Self.t0 + 2 * Self.minute)
        let priced = try Self.price(order, [Part(rowId: 1, units: nil, voidedMillis: Self.t0)])
        #expect(priced.overRefund != nil)
        let units = try Self.price(
            order,
            [Part(rowId: 1, units: Int.max, voidedMillis: Self.t0), Part(rowId: 2, units: 2, voidedMillis: Self.t0)])
        #expect(units.overRefund != nil)
        // An order without line items (units bought unknown): the voided quantities' sum is held, not trapped.
        var unknownUnits = OrderHistoryBuilder(currency: "USD", total: "4.00", tax: "0", quantity: 4)
        unknownUnits.lineItems = false
        _ = try Self.price(
            unknownUnits,
            [Part(rowId: 1, units: Int.max, voidedMillis: Self.t0), Part(rowId: 2, units: 2, voidedMillis: Self.t0)])
    }

    /// Voided quantities of 3 + 2 units on an order of 4 cannot be: set aside.
    @Test func voidedUnitsBeyondWhatWasBoughtAreSetAside() throws {
        let order = OrderHistoryBuilder(currency: "USD", total: "4.00", tax: "0", quantity: 4)
        let priced = try Self.price(
            order,
            [Part(rowId: 1, units: 3, voidedMillis: Self.t0), Part(rowId: 2, units: 2, voidedMillis: Self.t0 + 5)])
        #expect(priced.overRefund?.contains("5 units") == true)
        #expect(priced.parts.allSatisfy { $0.gross == nil && $0.note == .overRefunded })
    }

    /// A pending partial refund priced from its event keeps the note `pending`; an order without a refund event
    /// leaves the whole row without an amount (`no_refund_event`).
    @Test func pendingAndMissingEventsAreNoted() throws {
        var order = OrderHistoryBuilder(currency: "USD", total: "2.00", tax: "0", quantity: 2)
        order.partial("1.00", tax: "0", created: Self.t0 + 1000, state: "PENDING")
        let priced = try Self.price(
            order,
            [Part(rowId: 1, units: 1, voidedMillis: Self.t0), Part(rowId: 2, units: nil, voidedMillis: Self.t0 + 9)])
        #expect(try Self.part(priced, 1).note == .pending)
        #expect(try Self.part(priced, 1).gross == 1_000_000_000)
        #expect(try Self.part(priced, 2).gross == nil)
        #expect(try Self.part(priced, 2).note == .noRefundEvent)
        #expect(priced.unrevoked.isEmpty)
    }

    /// An order refunded without revocation (no voided row): its refund event and its processed partial refund are
    /// records of their own. USD 3.00 for 3 units: 1.00 back by amount, then the rest (2.00) in full.
    @Test func refundsWithoutRevocationAreRecords() throws {
        var order = OrderHistoryBuilder(currency: "USD", total: "3.00", tax: "0", quantity: 3)
        order.partial("1.00", tax: "0", created: Self.t0)
        order.fullRefund("3.00", tax: "0", at: Self.t0 + Self.day)
        let priced = try Self.price(order, [])
        #expect(priced.parts.isEmpty)
        let amounts = priced.unrevoked.map(\.amount)
        #expect(amounts.contains(.stated(gross: 1_000_000_000, tax: 0, precision: 9)))
        #expect(amounts.contains(.stated(gross: 2_000_000_000, tax: 0, precision: 9)))
        #expect(priced.unrevoked.first { $0.part == .orderRefund }?.quantity == 2)
    }
}
