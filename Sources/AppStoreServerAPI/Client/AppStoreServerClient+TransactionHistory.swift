import RateLimiting

extension AppStoreServerClient {
    /// Get Transaction History v2: one page (at most 20) of the customer's transactions, refunded and revoked ones
    /// included. Repeat the same `filter` on every page, with the returned `revision`, while `hasMore`.
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history)
    /// - Parameters:
    ///   - transactionId: any transaction ID of the customer.
    ///   - revision: the token from the previous page, or `nil` for the first.
    ///   - filter: dates, products, sort order, revoked only.
    ///   - purpose: incremental or backfill.
    /// - Returns: the page and the environment that answered.
    /// - Throws: ``AppStoreServerAPIError``, `QuotaError`, or `CancellationError`.
    public func transactionHistory(
        transactionId: String, revision: String?, filter: TransactionHistoryRequest = TransactionHistoryRequest(),
        purpose: CallPurpose
    ) async throws -> (page: HistoryResponse, environment: Environment) {
        var query: [(name: String, value: String)] = []
        if let revision { query.append(("revision", revision)) }
        query += filter.queryItems
        let request = APIRequest(
            api: .appleTransactionHistory, method: "GET", pathSegments: ["inApps", "v2", "history", transactionId],
            query: query, isTransactionLookup: true)
        let (page, environment) = try await perform(request, purpose: purpose, as: HistoryResponse.self)
        return (page, environment)
    }
}
