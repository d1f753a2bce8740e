import Foundation
import Ledger
import Testing

/// A Google `voidedPurchaseNotification` as a ledger record: keyed as the voided list keys the same void (so the
/// list's row later updates it), with what the notification lacks left for the list to fill.
@Suite("RefundRecord.voided(notice)")
struct VoidedNotificationRecordTests {
    let received = Date(timeIntervalSince1970: 1_795_000_000)
    let payload = Data(#"{"voidedPurchaseNotification":{"orderId":"GPA.1234-5678-9012-34567"}}"#.utf8)

    func notice(
        refundType: Int?, orderId: String? = "GPA.1234-5678-9012-34567", eventMillis: Int64? = 1_794_999_000_123
    )
        -> RefundRecord.VoidedNotice
    {
        RefundRecord.VoidedNotice(
            purchaseToken: "tok-abc", orderId: orderId, productType: 1, refundType: refundType,
            eventMillis: eventMillis)
    }

    @Test func aFullRefundIsTheWholeOrderKeyedAsTheVoidedListKeysIt() throws {
        let intake = RefundRecord.voided(notice(refundType: 1), payload: payload, receivedAt: received)
        guard case .refund(let record) = intake else {
            Issue.record("not a refund: \(intake)")
            return
        }
        #expect(record.platform == .google)
        #expect(record.orderId == "GPA.1234-5678-9012-34567")
        #expect(record.part == .whole)
        #expect(record.naturalKey.partKey == "")
        #expect(record.originalId == "tok-abc")
        #expect(record.refundedAt == Date(timeIntervalSince1970: 1_794_999_000.123))
        #expect(record.reasonCode == nil && record.reasonLabel == "unknown" && record.sourceCode == nil)
        #expect(record.purchasedAt == nil)
        #expect(record.kind == .full && record.quantity == 1)
        #expect(record.amount == .estimated)
        #expect(record.payload == payload)
        #expect(record.revokes)
    }

    @Test(arguments: [2, 3, nil] as [Int?])
    func aPartialOrUnknownRefundTypeIsLeftToTheVoidedList(refundType: Int?) {
        #expect(
            RefundRecord.voided(notice(refundType: refundType), payload: payload, receivedAt: received) == .notARefund)
    }

    @Test func aNotificationTheLedgerCannotTakeSaysWhy() {
        let cases: [(RefundRecord.VoidedNotice, String)] = [
            (notice(refundType: 1, orderId: nil), "orderId: missing"),
            (notice(refundType: 1, orderId: ""), "orderId: missing"),
            (notice(refundType: 1, eventMillis: nil), "eventTimeMillis: missing is not a time"),
            (notice(refundType: 1, eventMillis: 1_796_000_000_000), "eventTimeMillis: 1796000000000 is not a time"),
            (notice(refundType: 1, eventMillis: -1), "eventTimeMillis: -1 is not a time"),
        ]
        for (notice, reason) in cases {
            #expect(RefundRecord.voided(notice, payload: payload, receivedAt: received) == .unstorable(reason))
        }
        var tokenless = notice(refundType: 1)
        tokenless.purchaseToken = nil
        #expect(
            RefundRecord.voided(tokenless, payload: payload, receivedAt: received)
                == .unstorable("purchaseToken: missing"))
    }
}
