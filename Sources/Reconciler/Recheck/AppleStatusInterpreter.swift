import AppStoreServerAPI
import Foundation

/// Turns one verified item of Apple's Get All Subscription Statuses answer into a ``StatusReading``. Pure: no I/O.
///
/// Status 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked; entitled are 1 and 4. While in
/// grace the expiry is the grace period's end (`gracePeriodExpiresDate`), otherwise the transaction's `expiresDate`.
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/status)
public enum AppleStatusInterpreter {
    /// Reads one subscription's status.
    /// - Parameters:
    ///   - status: the item's `status` (nil when absent or not a number).
    ///   - transaction: the verified `signedTransactionInfo`.
    ///   - renewal: the verified `signedRenewalInfo`, when sent.
    ///   - environment: the environment that answered.
    public static func read(
        status: SubscriptionStatus?, transaction: JWSTransactionDecodedPayload,
        renewal: JWSRenewalInfoDecodedPayload?, environment: String
    ) -> StatusReading {
        guard let status else { return .badAnswer("the status item has no numeric status") }
        let state: LifecycleState
        switch status.rawValue {
        case 1: state = .active
        case 2: state = .expired
        case 3: state = .billingRetry
        case 4: state = .grace
        case 5: state = .revoked
        default: return .unknownState(String(status.rawValue))
        }
        guard let productId = transaction.productId, !productId.isEmpty else {
            return .badAnswer("the signed transaction has no productId")
        }
        guard let transactionId = transaction.transactionId, !transactionId.isEmpty else {
            return .badAnswer("the signed transaction has no transactionId")
        }
        guard let paidUntil = transaction.expiresDate else {
            return .badAnswer("the signed transaction has no (or an unparsable) expiresDate")
        }
        var expiresAt = paidUntil
        if state == .grace, let graceEnd = renewal?.gracePeriodExpiresDate { expiresAt = graceEnd }
        return .observed(
            StatusObservation(
                state: state, storeState: String(status.rawValue), entitled: state == .active || state == .grace,
                expiresAt: expiresAt, autoRenew: renewal?.autoRenewStatus.map { $0 == .on },
                autoRenewProductId: renewal?.autoRenewProductId, productId: productId, orderId: transactionId,
                environment: environment))
    }
}
