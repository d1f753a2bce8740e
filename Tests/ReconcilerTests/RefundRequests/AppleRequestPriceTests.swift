import AppStoreServerAPI
import Foundation
import Testing

@testable import Reconciler

/// An Apple request keeps the price of the transaction it is about (for the money kept when Apple declines).
@Suite("AppleRefundRequests: the request's price")
struct AppleRequestPriceTests {
    func request(_ json: String) throws -> NewRefundRequest {
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(json.utf8))
        return AppleRefundRequests.request(
            uuid: "n1", reason: "UNINTENDED_PURCHASE", payload, receivedAt: Date(timeIntervalSince1970: 1_795_000_000))
    }

    @Test func thePriceIsTheSignedTransactionsInNanos() throws {
        let made = try request(
            #"{"transactionId":"t1","productId":"coins.100","type":"Consumable","storefront":"DEU","price":4990,"currency":"eur"}"#
        )
        #expect(made.priceNanos == 4_990_000_000 && made.currency == "EUR" && made.country == "DE")
    }

    @Test func aPriceWithoutItsCurrencyIsNoPrice() throws {
        let made = try request(#"{"transactionId":"t1","productId":"coins.100","type":"Consumable","price":4990}"#)
        #expect(made.priceNanos == nil && made.currency == nil)
    }
}
