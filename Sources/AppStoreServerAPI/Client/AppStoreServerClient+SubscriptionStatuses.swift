import RateLimiting

extension AppStoreServerClient {
    /// Get All Subscription Statuses: the status and latest signed transaction and renewal info of every subscription
    /// of the customer, grouped by subscription group (arrays in no guaranteed order).
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses)
    /// - Parameters:
    ///   - transactionId: any transaction ID of the customer.
    ///   - status: only subscriptions with these statuses (all when empty).
    ///   - purpose: incremental or backfill.
    /// - Returns: the answer and the environment that gave it.
    /// - Throws: ``AppStoreServerAPIError``, `QuotaError`, or `CancellationError`.
    public func subscriptionStatuses(
        transactionId: String, status: [SubscriptionStatus] = [], purpose: CallPurpose
    ) async throws -> (response: StatusResponse, environment: Environment) {
        let request = APIRequest(
            api: .appleSubscriptionStatuses, method: "GET",
            pathSegments: ["inApps", "v1", "subscriptions", transactionId],
            query: status.map { ("status", String($0.rawValue)) }, isTransactionLookup: true)
        let (response, environment) = try await perform(request, purpose: purpose, as: StatusResponse.self)
        return (response, environment)
    }
}
