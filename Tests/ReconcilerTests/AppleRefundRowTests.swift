import AppStoreServerAPI
import Foundation
import Testing

@testable import Reconciler

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
        #expect(refunded.orderId == "20" && refunded.amountMilli == 9990)
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
        #expect(prorated.amountMilli == 990)
    }

    @Test func aFamilyRevokeMovesNoMoney() throws {
        let family = try #require(
            try row(#""revocationDate":1790000500000,"revocationType":"FAMILY_REVOKE""#, quantity: 3, price: 2970))
        #expect(family.kind == .familyRevoke)
        #expect(family.amount == .none(note: "family_revoke") && family.amountMilli == nil)
    }

    @Test(arguments: [(1000, 50_000, Int64(500)), (1001, 50_000, 500), (1003, 50_000, 502), (999, 100_000, 999)])
    func legacyMilliunitsRoundHalfToEven(_ price: Int64, _ percentage: Int, _ milli: Int64) {
        let (amount, legacy) = RefundRecord.appleAmount(kind: .prorated, price: price, percentageMilli: percentage)
        #expect(legacy == milli)
        #expect(amount == .stated(gross: price * Int64(percentage), tax: nil, precision: 8))
    }

    /// Unknown values are kept, not refused (issue 17): a revocation type or reason Apple adds later is stored raw.
    @Test func anUnknownRevocationTypeIsKeptAsUnknownWithNoAmount() throws {
        let refund = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":0,"revocationType":"REFUND_SOMEDAY""#))
        #expect(refund.kind == .unknown && refund.amountMilli == nil)
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
}
