import AppStoreServerAPI
import Foundation
import Testing

@testable import Ledger

@Suite struct AppleRefundRowTests {
    func row(_ fields: String, quantity: Int = 1, price: Int = 9990) throws -> RefundRecord? {
        let json = Data(
            """
            {"transactionId":"20","originalTransactionId":"10","productId":"pro","quantity":\(quantity),"price":\(price),
             "currency":"USD","purchaseDate":1790000000000,\(fields)}
            """.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        guard case .refund(let record) = RefundRecord.intake(VerifiedTransaction(payload: payload, json: json)) else {
            return nil
        }
        return record
    }

    @Test func anUpgradedTransactionIsNotARefund() throws {
        #expect(try row(#""revocationDate":1790000500000,"isUpgraded":true"#) == nil)
    }

    @Test func aRefundedTransactionIsOneRefundWhetherOrNotItWasUpgraded() throws {
        let refunded = try #require(try row(#""revocationDate":1790000500000,"revocationReason":0"#))
        #expect(refunded.orderId == "20" && refunded.amount == .stated(gross: 9990, tax: nil, precision: 3))
        let both = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":1,"isUpgraded":true"#))
        #expect(both.reasonLabel == "app_issue")
    }

    @Test func aTransactionWithoutRevocationIsNoRefund() throws {
        #expect(try row(#""isUpgraded":true"#) == nil)
    }

    /// A consumable bought 3 at a time for 0.99 each: Apple signs `price` 2970, the total for the quantity.
    @Test func theAmountIsTheSignedPriceTimesThePercentageNeverTimesTheQuantityAgain() throws {
        let full = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":0"#, quantity: 3, price: 3 * 990))
        #expect(full.quantity == 3)
        #expect(full.amount == .stated(gross: 2970, tax: nil, precision: 3))
        // 33.333 % of 2.970 = 0.98999010: exact at 8 digits, nothing rounded.
        let prorated = try #require(
            try row(
                #""revocationDate":1790000500000,"revocationReason":0,"revocationType":"REFUND_PRORATED","revocationPercentage":33333"#,
                quantity: 3, price: 3 * 990))
        #expect(prorated.amount == .stated(gross: 98_999_010, tax: nil, precision: 8))
    }

    @Test func aFamilyRevokeMovesNoMoney() throws {
        let family = try #require(
            try row(#""revocationDate":1790000500000,"revocationType":"FAMILY_REVOKE""#, quantity: 3, price: 2970))
        #expect(family.kind == .familyRevoke)
        #expect(family.amount == .none(note: .familyRevoke))
    }

    /// A prorated refund is the price x revocationPercentage, exact in 8 decimal digits: 50 % of 9.99 is
    /// 4.995 (499_500_000 x 10^-8), never rounded when stored.
    @Test func aProratedAmountIsExact() {
        let amount = RefundRecord.appleAmount(kind: .prorated, price: 9990, percentageMilli: 50_000)
        #expect(amount == .stated(gross: 499_500_000, tax: nil, precision: 8))
        // Without its percentage, what a prorated refund gave back is unknown, not the full price.
        #expect(RefundRecord.appleAmount(kind: .prorated, price: 9990, percentageMilli: nil) == .none(note: nil))
    }

    /// Item 5 of issue 25: the storefront (ISO 3166-1 alpha-3) is the buyer's country, reported alpha-2.
    @Test(arguments: [("DEU", "DE"), ("JPN", "JP"), ("USA", "US"), ("KOR", "KR"), ("XYZ", nil)])
    func theStorefrontIsTheCountry(_ storefront: String, _ country: String?) throws {
        let refund = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":0,"storefront":"\#(storefront)""#))
        #expect(refund.buyerCountry == country)
    }

    /// Unknown values are kept, not refused (issue 17): a revocation type or reason Apple adds later is stored raw.
    @Test func anUnknownRevocationTypeIsKeptAsUnknownWithNoAmount() throws {
        let refund = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":0,"revocationType":"REFUND_SOMEDAY""#))
        #expect(refund.kind == .unknown)
        // Amount unknown, as for any refund whose amount is not known: no exact amount, no source, no note.
        #expect(refund.amount == .none(note: nil))
        #expect(String(decoding: refund.payload, as: UTF8.self).contains("REFUND_SOMEDAY"))
    }

    @Test func anUnknownRevocationReasonIsKeptRawAndLabelledUnknown() throws {
        let refund = try #require(try row(#""revocationDate":1790000500000,"revocationReason":7"#))
        #expect(refund.reasonCode == 7 && refund.reasonLabel == "unknown")
    }

    @Test func aRevocationWithoutTransactionIdIsSetAsideWithItsReason() throws {
        let json = Data(#"{"originalTransactionId":"10","revocationDate":1790000500000}"#.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        guard case .unstorable(let reason) = RefundRecord.intake(VerifiedTransaction(payload: payload, json: json))
        else {
            Issue.record("a revocation without transactionId was not set aside")
            return
        }
        #expect(reason.hasPrefix("transactionId: missing"))
    }

    /// A revocation date this version cannot read (an ISO string) would read as no revocation at all: the refund is
    /// set aside for the quarantine, naming the field, not passed over as a purchase.
    @Test(arguments: [#""2026-03-01T00:00:00Z""#, "true", "1e30"])
    func anUnreadableRevocationDateIsSetAsideNotPassedOver(value: String) throws {
        let json = Data(#"{"transactionId":"20","originalTransactionId":"10","revocationDate":\#(value)}"#.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(payload.revocationDate == nil)
        guard case .unstorable(let reason) = RefundRecord.intake(VerifiedTransaction(payload: payload, json: json))
        else {
            Issue.record("an unreadable revocation date was not set aside")
            return
        }
        #expect(reason.hasPrefix("revocationDate: "), "\(reason)")
    }

    @Test func aNullOrAbsentRevocationDateIsNoRefund() throws {
        for json in [#"{"transactionId":"20","revocationDate":null}"#, #"{"transactionId":"20"}"#] {
            let data = Data(json.utf8)
            let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: data)
            guard case .notARefund = RefundRecord.intake(VerifiedTransaction(payload: payload, json: data)) else {
                Issue.record("\(json) was taken for a refund")
                continue
            }
        }
    }
}
