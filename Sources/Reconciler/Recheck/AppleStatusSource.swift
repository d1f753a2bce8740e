import AppStoreServerAPI
import Foundation

/// Apple Get All Subscription Statuses for the recheck job, with both signed payloads verified.
///
/// The environment a subscription last answered from is asked first (production for one never seen); on 4040010
/// (or 4040001/4040005, read the same way) the other one is asked when sandbox fallback is configured. Not found in every environment asked is
/// ``StatusReading/missing``.
public struct AppleStatusSource: SubscriptionStatusSource {
    /// Clients and verifiers per environment, in the order to ask them for a subscription never seen.
    public let environments: [(client: AppStoreServerClient, verifier: SignedPayloadVerifier)]

    /// Creates the source.
    /// - Parameter environments: the configured environment first, then sandbox when falling back is allowed.
    public init(environments: [(client: AppStoreServerClient, verifier: SignedPayloadVerifier)]) {
        self.environments = environments
    }

    public func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading {
        var order = environments
        if let last = subscription.environment,
            let index = order.firstIndex(where: { $0.verifier.environment.rawValue == last }), index > 0
        {
            order.insert(order.remove(at: index), at: 0)
        }
        for (client, verifier) in order {
            let response: StatusResponse
            do {
                response = try await client.subscriptionStatuses(
                    transactionId: subscription.storeId, purpose: .incremental
                ).response
            } catch let error as AppStoreServerAPIError where error.apiErrorCode?.meansTransactionNotFound == true {
                continue
            } catch let error as AppStoreServerAPIError where error.code == .invalidResponse {
                return .badAnswer("\(error)")
            } catch let error as AppStoreServerAPIError
                where error.httpStatus == 404 && error.apiErrorCode?.isRetryableNotFound == true
            {
                // Still "not found, retryable" after the retries: this subscription is asked again next run; the
                // others go on.
                return .badAnswer("\(error)")
            } catch let error as AppStoreServerAPIError
                where error.code == .apiError && !error.isRetryable
                && error.httpStatus.map({ $0 < 500 && $0 != 401 && $0 != 429 }) == true
            {
                return .badAnswer("\(error)")
            }
            return await interpret(response, for: subscription, verifier: verifier)
        }
        return .missing
    }

    private func interpret(
        _ response: StatusResponse, for subscription: StoredSubscription,
        verifier: SignedPayloadVerifier
    ) async -> StatusReading {
        let items = response.data.flatMap(\.lastTransactions)
        guard let item = items.first(where: { $0.originalTransactionId == subscription.storeId }) else {
            return .badAnswer("the answer lists no status for originalTransactionId \(subscription.storeId)")
        }
        guard let signedTransaction = item.signedTransactionInfo else {
            return .badAnswer("the status item has no signedTransactionInfo")
        }
        do {
            let transaction = try await verifier.verifyTransaction(signedTransaction).payload
            guard transaction.originalTransactionId == subscription.storeId else {
                return .badAnswer("the signed transaction is for another originalTransactionId")
            }
            var renewal: JWSRenewalInfoDecodedPayload?
            if let signedRenewal = item.signedRenewalInfo {
                renewal = try await verifier.verifyRenewalInfo(signedRenewal).payload
            }
            return AppleStatusInterpreter.read(
                status: item.status, transaction: transaction, renewal: renewal,
                environment: verifier.environment.rawValue)
        } catch let error as AppStoreServerAPIError {
            return .badAnswer("signed payload rejected: \(error.code): \(error.message)")
        } catch {
            return .badAnswer("signed payload rejected: \(error)")
        }
    }
}
