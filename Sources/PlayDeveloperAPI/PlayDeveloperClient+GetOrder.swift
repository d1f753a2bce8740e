import Foundation
import RateLimiting

extension PlayDeveloperClient {
    /// Reads one order with `orders.get`: its state, total, buyer country and line items (product, service period).
    /// Quota: ``StoreAPI/googleOrders``. Needs the Play Console permission "View financial data".
    /// See [orders.get](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/get).
    /// - Throws: ``PlayAPIError`` (`notFound` for an unknown order, `permissionDenied`) or the gate's `QuotaError`.
    public func getOrder(packageName: String, orderId: String, purpose: CallPurpose) async throws -> PlayOrder {
        let segments = ["androidpublisher", "v3", "applications", packageName, "orders", orderId]
        let label = PlayURL.label(method: "GET", segments: segments)
        guard !packageName.isEmpty, !orderId.isEmpty,
            let url = PlayURL.make(base: configuration.baseURL, segments: segments)
        else {
            throw PlayAPIError(
                .invalidArgument, "cannot build the request URL", app: app, packageName: packageName, request: label)
        }
        let endpoint = Endpoint(api: .googleOrders, packageName: packageName, url: url, label: label)
        let body = try await get(endpoint, purpose: purpose)
        return try decode(endpoint, body) { try JSONDecoder().decode(PlayOrder.self, from: $0) }
    }
}
