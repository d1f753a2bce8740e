import AppStoreServerAPI
import Foundation

/// Apple's verified transactions as ledger records. Pure: only verified payloads reach it, and it makes no call.
extension RefundRecord {
    /// Maps a verified transaction to a record, or says why it is none or cannot be stored.
    public static func intake(_ verified: VerifiedTransaction, signed: String? = nil) -> Intake {
        let transaction = verified.payload
        guard let revoked = transaction.revocationDate else {
            // Read leniently, a revocation date in a form this version cannot read is nil: the refund is set aside
            // to be seen, not passed over as a purchase.
            if let odd = unreadableRevocationDate(verified.json) {
                return .unstorable("revocationDate: \(odd) is not a time in milliseconds")
            }
            return .notARefund
        }
        guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
            return .unstorable("transactionId: missing (the ledger's key) on a revoked transaction")
        }
        if let oversized = LedgerLimits.oversized("transactionId", transactionId)
            ?? transaction.originalTransactionId.flatMap({ LedgerLimits.oversized("originalTransactionId", $0) })
        {
            return .unstorable(oversized)
        }
        // A transaction ended by an upgrade within its group is not a refund (the receipt era set a cancellation
        // date on it too); counting it would count an upgraded-then-refunded subscription twice. Refunds and
        // revocations always carry a reason.
        if transaction.isUpgraded == true, transaction.revocationReason == nil, transaction.revocationType == nil {
            return .notARefund
        }
        let kind: Kind
        switch transaction.revocationType {
        case .some(.refundProrated): kind = .prorated
        case .some(.familyRevoke): kind = .familyRevoke
        case .none, .some(.refundFull): kind = .full
        // A type this version does not know is kept (its raw value stays in the payload); its amount is unknown.
        case .some: kind = .unknown
        }
        let percentage = transaction.revocationPercentage
        let amount = appleAmount(kind: kind, price: transaction.price, percentageMilli: percentage)
        let reason = transaction.revocationReason?.rawValue
        return .refund(
            RefundRecord(
                platform: .apple, orderId: transactionId, part: .whole,
                originalId: transaction.originalTransactionId ?? transactionId, productId: transaction.productId,
                purchasedAt: transaction.purchaseDate, refundedAt: revoked, reasonCode: reason,
                reasonLabel: reason == 0 ? "other" : reason == 1 ? "app_issue" : "unknown", kind: kind,
                quantity: max(1, transaction.quantity ?? 1), percentageMilli: percentage,
                priceMilli: transaction.price, amount: amount, currency: transaction.currency,
                environment: transaction.environment?.rawValue,
                buyerCountry: transaction.storefront.flatMap(CountryCode.alpha2(fromAlpha3:)), payload: verified.json,
                signed: signed))
    }

    /// The payload's `revocationDate` when it is there, not null, yet could not be read (a string, an ISO date), in
    /// at most 40 characters; nil otherwise. Most transactions have none: their bytes are searched before any parse.
    static func unreadableRevocationDate(_ json: Data) -> String? {
        guard json.range(of: Data("\"revocationDate\"".utf8)) != nil,
            let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let value = object["revocationDate"], !(value is NSNull)
        else { return nil }
        return String(String(describing: value).prefix(40))
    }

    /// What a revocation refunded. Apple's `price` is already the total for the quantity bought ("the total amount
    /// of the transaction for the quantity the customer purchased"), in milliunits, and `revocationPercentage`
    /// (milli-percent: 50000 = 50 %) applies to that total. The exact prorated amount is `price x percentage` in 8
    /// decimal digits (3 + 5); nothing is rounded here. A family revoke moves no money (the purchaser's own
    /// transaction carries any refund): no amount. Nor has a revocation type this version does not know (`unknown`),
    /// or a prorated one without its percentage: what it refunded is not known.
    public static func appleAmount(kind: Kind, price: Int64?, percentageMilli: Int?) -> Amount {
        guard let price, kind != .familyRevoke, kind != .unknown else {
            return .none(note: kind == .familyRevoke ? .familyRevoke : nil)
        }
        guard kind == .prorated else { return .stated(gross: price, tax: nil, precision: 3) }
        // A prorated refund without its percentage refunded an unknown part of the price.
        guard let percentageMilli else { return .none(note: nil) }
        let (exact, overflow) = price.multipliedReportingOverflow(by: Int64(percentageMilli))
        return overflow ? .none(note: nil) : .stated(gross: exact, tax: nil, precision: 8)
    }

    /// The `transactionId` an unverified JWS claims, to label its quarantine entry (never trusted beyond that).
    public static func claimedTransactionId(_ jws: String) -> String? {
        struct Claim: Decodable { var transactionId: String? }
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONDecoder().decode(Claim.self, from: data))?.transactionId
    }
}
