import Foundation
import RateLimiting

extension PlayDeveloperClient {
    /// Which voided purchases `purchases.voidedpurchases.list` returns (`type`).
    public enum VoidedPurchasesType: Int32, Sendable, CaseIterable {
        /// 0: one-time products only (Google's default).
        case oneTimeProducts = 0
        /// 1: one-time products and subscriptions; renewals share a `purchaseToken`, so key on `orderId`.
        case oneTimeProductsAndSubscriptions = 1
    }

    /// Lists purchases that were canceled, refunded or charged back: one page of `purchases.voidedpurchases.list`.
    ///
    /// `startTime`/`endTime` filter on when Google *recorded* the void and are sent only without `token` (Google
    /// ignores them on continuation pages). Google keeps 30 days: the caller clamps the window and reports a gap.
    /// Quota: ``StoreAPI/googleVoidedPurchases``.
    /// See [purchases.voidedpurchases.list](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list).
    /// - Parameters:
    ///   - packageName: the app's package name, e.g. `com.acme.app`.
    ///   - startTime: the oldest recording time wanted (sent as milliseconds since the epoch).
    ///   - endTime: the newest recording time wanted; not after now.
    ///   - token: `tokenPagination.nextPageToken` of the previous page.
    ///   - maxResults: 1 ... 1000 (Google's default and maximum is 1000).
    ///   - type: one-time products only, or subscriptions too.
    ///   - includeQuantityBasedPartialRefund: whether partial refunds of multi-quantity purchases yield rows.
    ///   - purpose: incremental or backfill, for the quota gate.
    /// - Returns: the page, each row with its JSON as sent.
    /// - Throws: ``PlayAPIError`` or the gate's `QuotaError`.
    public func listVoidedPurchases(
        packageName: String, startTime: Date? = nil, endTime: Date? = nil, token: String? = nil,
        maxResults: Int? = nil, type: VoidedPurchasesType? = nil, includeQuantityBasedPartialRefund: Bool? = nil,
        purpose: CallPurpose
    ) async throws -> VoidedPurchasesListResponse {
        let endpoint = try voidedPurchasesEndpoint(
            packageName: packageName, startTime: startTime, endTime: endTime, token: token, maxResults: maxResults,
            type: type, includeQuantityBasedPartialRefund: includeQuantityBasedPartialRefund)
        let body = try await get(endpoint, purpose: purpose)
        return try decode(endpoint, body) { try VoidedPurchasesListResponse(json: $0) }
    }

    func voidedPurchasesEndpoint(
        packageName: String, startTime: Date?, endTime: Date?, token: String?, maxResults: Int?,
        type: VoidedPurchasesType?, includeQuantityBasedPartialRefund: Bool?
    ) throws -> Endpoint {
        let segments = [
            "androidpublisher", "v3", "applications", packageName, "purchases", "voidedpurchases",
        ]
        let label = PlayURL.label(method: "GET", segments: segments)
        func invalid(_ message: String) -> PlayAPIError {
            PlayAPIError(.invalidArgument, message, app: app, packageName: packageName, request: label)
        }
        guard !packageName.isEmpty else { throw invalid("empty package name") }
        var query: [(String, String)] = []
        if let token, !token.isEmpty {
            query.append(("token", token))
        } else {
            if let startTime { query.append(("startTime", String(Self.milliseconds(startTime)))) }
            if let endTime { query.append(("endTime", String(Self.milliseconds(endTime)))) }
            if let startTime, let endTime, endTime < startTime {
                throw invalid("endTime \(endTime) is before startTime \(startTime)")
            }
        }
        if let maxResults {
            guard (1...1000).contains(maxResults) else { throw invalid("maxResults \(maxResults) is not in 1...1000") }
            query.append(("maxResults", String(maxResults)))
        }
        if let type { query.append(("type", String(type.rawValue))) }
        if let includeQuantityBasedPartialRefund {
            query.append(("includeQuantityBasedPartialRefund", includeQuantityBasedPartialRefund ? "true" : "false"))
        }
        guard let url = PlayURL.make(base: configuration.baseURL, segments: segments, query: query) else {
            throw invalid("cannot build the request URL")
        }
        return Endpoint(api: .googleVoidedPurchases, packageName: packageName, url: url, label: label)
    }

    /// Milliseconds since the epoch, rounded to the nearest millisecond.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
