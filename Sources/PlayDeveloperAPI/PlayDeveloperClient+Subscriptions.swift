import Foundation
import RateLimiting

extension PlayDeveloperClient {
    /// Gets a subscription's current state: `purchases.subscriptionsv2.get`.
    ///
    /// Quota: ``StoreAPI/googleSubscriptions``. An unknown token is a ``PlayAPIError`` with code `.notFound`.
    /// See [purchases.subscriptionsv2.get](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2/get).
    /// - Parameters:
    ///   - packageName: the app's package name.
    ///   - token: the purchase token (percent-encoded into the path; errors show only its first characters).
    ///   - purpose: incremental or backfill, for the quota gate.
    /// - Returns: the state, with the body kept in ``SubscriptionPurchaseV2/rawJSON``.
    /// - Throws: ``PlayAPIError`` or the gate's `QuotaError`.
    public func subscriptionV2(packageName: String, token: String, purpose: CallPurpose) async throws
        -> SubscriptionPurchaseV2
    {
        let endpoint = try subscriptionEndpoint(packageName: packageName, token: token)
        let body = try await get(endpoint, purpose: purpose)
        return try decode(endpoint, body) { try SubscriptionPurchaseV2(json: $0) }
    }

    func subscriptionEndpoint(packageName: String, token: String) throws -> Endpoint {
        let segments = [
            "androidpublisher", "v3", "applications", packageName, "purchases", "subscriptionsv2", "tokens", token,
        ]
        let label = PlayURL.label(method: "GET", segments: segments, tokenIndex: segments.count - 1)
        func invalid(_ message: String) -> PlayAPIError {
            PlayAPIError(.invalidArgument, message, app: app, packageName: packageName, request: label)
        }
        guard !packageName.isEmpty else { throw invalid("empty package name") }
        guard !token.isEmpty else { throw invalid("empty purchase token") }
        guard let url = PlayURL.make(base: configuration.baseURL, segments: segments) else {
            throw invalid("cannot build the request URL")
        }
        return Endpoint(api: .googleSubscriptions, packageName: packageName, url: url, label: label)
    }
}
