import RateLimiting

extension AppStoreServerClient {
    /// Get Refund History v2: one page (at most 20) of a customer's refunded transactions, ascending by revocation
    /// date. Call again with the returned `revision` while `hasMore`; keep the last `revision` to ask later for only
    /// what is new.
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/get-refund-history)
    /// - Parameters:
    ///   - transactionId: any transaction ID of the customer.
    ///   - revision: the token from the previous page, or `nil` for the first.
    ///   - purpose: incremental or backfill (which share of the daily budget the call may use).
    /// - Returns: the page and the environment that answered.
    /// - Throws: ``AppStoreServerAPIError``, `QuotaError`, or `CancellationError`.
    public func refundHistory(transactionId: String, revision: String?, purpose: CallPurpose) async throws -> (
        page: RefundHistoryResponse, environment: Environment
    ) {
        let request = APIRequest(
            api: .appleRefundHistory, method: "GET", pathSegments: ["inApps", "v2", "refund", "lookup", transactionId],
            query: revision.map { [("revision", $0)] } ?? [], isTransactionLookup: true)
        let (page, environment) = try await perform(request, purpose: purpose, as: RefundHistoryResponse.self)
        return (page, environment)
    }
}
