import AppStoreServerAPI
import Foundation
import Testing

@testable import Reconciler

@Suite struct AppleRefundRowTests {
    func row(_ fields: String) throws -> AppleRefundStore.Row? {
        let json = Data(
            """
            {"transactionId":"20","originalTransactionId":"10","productId":"pro","quantity":1,"price":9990,
             "currency":"USD","purchaseDate":1790000000000,\(fields)}
            """.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        return AppleRefundStore.row(VerifiedTransaction(payload: payload, json: json))
    }

    @Test func anUpgradedTransactionIsNotARefund() throws {
        #expect(try row(#""revocationDate":1790000500000,"isUpgraded":true"#) == nil)
    }

    @Test func aRefundedTransactionIsOneRefundWhetherOrNotItWasUpgraded() throws {
        let refunded = try #require(try row(#""revocationDate":1790000500000,"revocationReason":0"#))
        #expect(refunded.transactionId == "20" && refunded.amountMilli == 9990)
        let both = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":1,"isUpgraded":true"#))
        #expect(both.reasonLabel == "app_issue")
    }

    @Test func aTransactionWithoutRevocationIsNoRefund() throws {
        #expect(try row(#""isUpgraded":true"#) == nil)
    }

    /// Unknown values are kept, not refused (issue 17): a revocation type or reason Apple adds later is stored raw.
    @Test func anUnknownRevocationTypeIsKeptAsUnknownWithNoAmount() throws {
        let refund = try #require(
            try row(#""revocationDate":1790000500000,"revocationReason":0,"revocationType":"REFUND_SOMEDAY""#))
        #expect(refund.type == "unknown" && refund.amountMilli == nil)
        #expect(refund.payload.contains("REFUND_SOMEDAY"))
    }

    @Test func anUnknownRevocationReasonIsKeptRawAndLabelledUnknown() throws {
        let refund = try #require(try row(#""revocationDate":1790000500000,"revocationReason":7"#))
        #expect(refund.reasonCode == 7 && refund.reasonLabel == "unknown")
    }

    @Test func aRevocationWithoutTransactionIdIsSetAsideWithItsReason() throws {
        let json = Data(#"{"originalTransactionId":"10","revocationDate":1790000500000}"#.utf8)
        let payload = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        guard case .unstorable(let reason) = AppleRefundStore.intake(VerifiedTransaction(payload: payload, json: json))
        else {
            Issue.record("a revocation without transactionId was not set aside")
            return
        }
        #expect(reason.hasPrefix("transactionId: missing"))
    }
}
