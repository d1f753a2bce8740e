import Foundation
import TestSupport
import Testing

@testable import PlayDeveloperAPI

/// The one-pass Orders decoder must give exactly what JSONDecoder gives, and step aside for anything it does not fully
/// understand: it never accepts an answer JSONDecoder refuses, nor reads one differently.
@Suite struct OrdersFastDecoderTests {
    /// An order as Google documents it (orders resource), with members storerecon does not read: objects, arrays,
    /// numbers with fractions and exponents, literals, escapes and non-ASCII text among them.
    static let full = #"""
        {"orderId": "GPA.3312-1234-5678-90123", "purchaseToken": "tok.AO-J1O1", "state": "PARTIALLY_REFUNDED",
         "buyerAddress": {"buyerState": "Bayern", "buyerCountry": "DE", "buyerPostcode": "80331"},
         "createTime": "2026-10-01T10:00:00.123Z", "lastEventTime": "2026-10-05T10:00:00Z",
         "total": {"currencyCode": "EUR", "units": "6", "nanos": 930000000},
         "tax": {"currencyCode": "EUR", "units": "1", "nanos": 110000000},
         "developerRevenueInBuyerCurrency": {"currencyCode": "EUR", "units": 5, "nanos": 0},
         "salesChannel": "PLAY_STORE", "pointsDetails": {"pointsCouponValue": {"units": "0"}, "rate": 1.5e3,
         "flags": [true, false, null, -0.25, "Coins \u0026 gems \"x\" \\ \/"]},
         "lineItems": [
           {"productId": "coins_100", "productTitle": "Münzen ✓ \u00fc", "listingPrice": {"currencyCode": "EUR",
            "units": "0", "nanos": 990000000}, "total": {"currencyCode": "EUR", "units": "6", "nanos": 930000000},
            "tax": {"currencyCode": "EUR", "units": "1", "nanos": 110000000},
            "oneTimePurchaseDetails": {"quantity": 7, "offerId": "o", "purchaseOptionId": "p"}},
           {"productId": "pro", "subscriptionDetails": {"basePlanId": "monthly", "offerId": "intro",
            "servicePeriodStartTime": "2026-10-01T10:00:00Z", "servicePeriodEndTime": "2026-11-01T10:00:00Z"},
            "paidAppDetails": {}}],
         "orderHistory": {"processedEvent": {"eventTime": "2026-10-01T10:00:01Z"},
           "refundEvent": {"eventTime": "2026-10-05T10:00:00Z", "refundReason": "OTHER",
             "refundDetails": {"total": {"currencyCode": "EUR", "units": "-4", "nanos": -950000000},
                               "tax": {"currencyCode": "EUR", "units": "0", "nanos": -790000000}}},
           "partialRefundEvents": [
             {"createTime": "2026-10-02T10:00:00Z", "processTime": "2026-10-02T10:00:03Z",
              "state": "PROCESSED_SUCCESSFULLY", "refundDetails": {"total": {"currencyCode": "EUR", "units": "1",
              "nanos": 980000000}, "tax": {"currencyCode": "EUR", "nanos": 320000000}}},
             {"createTime": "2026-10-03T10:00:00Z", "state": "PENDING"}]}}
        """#

    static let understood: [String] = [
        "{}",
        #"{"orders": []}"#,
        #"{"orders": [\#(full), {"orderId": "GPA.1..1"}], "kind": "androidpublisher#batch", "n": 2}"#,
        #"{"orders":[{"orderId":"x","total":{"currencyCode":"JPY","units":"1500"},"tax":{}}]}"#,
    ]

    @Test(arguments: understood)
    func givesWhatJSONDecoderGives(json: String) throws {
        let data = Data(json.utf8)
        let fast = try #require(OrdersFastDecoder.decode(data), "the fast path should take this answer")
        #expect(fast == (try JSONDecoder().decode(BatchGetOrdersResponse.self, from: data)))
    }

    @Test func readsTheValuesOfAnOrder() throws {
        let answer = try #require(OrdersFastDecoder.decode(Data(Self.understood[2].utf8)))
        let order = try #require(answer.orders?.first)
        #expect(order.orderId == "GPA.3312-1234-5678-90123" && order.state == "PARTIALLY_REFUNDED")
        #expect(order.buyerAddress?.buyerCountry == "DE")
        #expect(order.total == PlayMoney(currencyCode: "EUR", units: 6, nanos: 930_000_000))
        #expect(order.developerRevenueInBuyerCurrency?.units == 5)
        #expect(order.lineItems?.first?.oneTimePurchaseDetails?.quantity == 7)
        #expect(order.lineItems?.last?.subscriptionDetails?.basePlanId == "monthly")
        #expect(order.orderHistory?.refundEvent?.refundDetails?.total?.totalNanos == -4_950_000_000)
        #expect(order.orderHistory?.partialRefundEvents?.count == 2)
        #expect(order.orderHistory?.partialRefundEvents?.first?.refundDetails?.tax?.nanos == 320_000_000)
        #expect(order.refundPending)
        #expect(answer.orders?.last == PlayOrder(orderId: "GPA.1..1"))
    }

    /// Answers the fast path leaves to JSONDecoder: a read string with an escape, a null, a repeated key, a units
    /// string that is not a number, nanos of the other sign or out of range, a number in a read place that is not an
    /// integer, a missing orderId, malformed JSON in a skipped member, text after the end.
    static let declined: [String] = [
        #"{"orders":[{"orderId":"GPA.\u0031"}]}"#,
        #"{"orders":[{"orderId":"x","state":null}]}"#,
        #"{"orders":null}"#,
        #"{"orders":[{"orderId":"x","orderId":"y"}]}"#,
        #"{"orders":[{"orderId":"x","total":{"units":"1x"}}]}"#,
        #"{"orders":[{"orderId":"x","total":{"units":"1","nanos":-5}}]}"#,
        #"{"orders":[{"orderId":"x","total":{"nanos":1000000000}}]}"#,
        #"{"orders":[{"orderId":"x","lineItems":[{"oneTimePurchaseDetails":{"quantity":1.0}}]}]}"#,
        #"{"orders":[{"state":"PROCESSED"}]}"#,
        #"{"orders":[{"orderId":"x","extra":01}]}"#,
        #"{"orders":[{"orderId":"x","extra":tru}]}"#,
        #"{"orders":[{"orderId":"x","extra":"\q"}]}"#,
        #"{"orders":[{"orderId":"x","extra":[1,]}]}"#,
        #"{"orders":[]} x"#,
    ]

    @Test(arguments: declined)
    func leavesToJSONDecoderWhatItIsNotSureOf(json: String) {
        #expect(OrdersFastDecoder.decode(Data(json.utf8)) == nil)
    }

    /// Damaged answers (bytes dropped, repeated or changed): whatever the fast path accepts, JSONDecoder accepts and
    /// reads the same.
    @Test func neverAcceptsWhatJSONDecoderRefusesOrReadsDifferently() throws {
        let original = Array(Self.understood[2].utf8)
        var generator = SeededGenerator(seed: 26)
        var accepted = 0
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(bytes[at], at: at)
                default: bytes[at] = Array(#"{}[]:,"\-0123456789.eEtrufalsn "#.utf8).randomElement(using: &generator)!
                }
            }
            let data = Data(bytes)
            guard let fast = OrdersFastDecoder.decode(data) else { continue }
            accepted += 1
            let reference = try? JSONDecoder().decode(BatchGetOrdersResponse.self, from: data)
            #expect(reference == fast, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 100)
    }

    /// Each order's JSON text is kept as Google sent it: its element of the answer, byte for byte (spacing, key
    /// order, members storerecon does not read, escapes), also on a slice of a larger buffer.
    @Test func keepsEachOrdersTextAsSent() throws {
        let second = #"{ "orderId" : "GPA.1..1", "zz": [1, {"a": "\u00fc"}] }"#
        let body = Data(("xx" + #"{"kind": "k", "orders": [ \#(Self.full) ,\#(second)]}"#).utf8).dropFirst(2)
        let orders = try #require(OrdersFastDecoder.decode(body)?.orders)
        #expect(PlayDeveloperClient.orderTexts(in: body, orders: orders) == [Self.full, second])
    }

    /// A body the fast reader is not sure of (`orders` given twice: JSONDecoder reads the last) is split by
    /// JSONSerialization: one text per decoded order, with the order's members.
    @Test func splitsAnAnswerItIsNotSureOfWithJSONSerialization() throws {
        let body = Data(#"{"orders": [{"orderId": "a"}], "orders": [{"orderId": "b", "x": 1}]}"#.utf8)
        #expect(OrdersFastDecoder.orderSpans(body) == nil)
        let orders = try JSONDecoder().decode(BatchGetOrdersResponse.self, from: body).orders ?? []
        let texts = PlayDeveloperClient.orderTexts(in: body, orders: orders)
        #expect(texts.count == 1)
        let member = try JSONSerialization.jsonObject(with: Data(texts[0].utf8)) as? [String: Any]
        #expect(member?["orderId"] as? String == "b" && member?["x"] as? Int == 1)
    }
}
