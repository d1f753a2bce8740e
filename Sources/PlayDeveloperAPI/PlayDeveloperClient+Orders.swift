import Foundation
import RateLimiting

extension PlayDeveloperClient {
    /// The most order ids `orders.batchget` takes.
    public static let maxOrderIds = 1000

    /// Reads up to 1000 orders with one `orders.batchget` call: what each buyer paid (total, tax, country), the
    /// line items, and the refunds (`orderHistory`).
    ///
    /// Google fails the **whole** call with 404 when any id is unknown or belongs to another package; the caller
    /// splits and retries to find it (see `GoogleOrderAmounts`). A URL longer than ``maxURLLength`` travels as
    /// Google's own clients send it: `POST` with `X-HTTP-Method-Override: GET` and the ids as a form body.
    /// Quota: ``StoreAPI/googleOrders``. Needs the Play Console permission "View financial data".
    /// See [orders.batchget](https://developers.google.com/android-publisher/api-ref/rest/v3/orders/batchget).
    /// - Returns: the orders, and the answer's body as Google sent it (the orders in the order of its `orders`
    ///   array), so a caller can keep each order's JSON without encoding it again.
    /// - Throws: ``PlayAPIError`` (`invalidArgument` for no ids, more than 1000 or repeated ids; `notFound` for the
    ///   whole-call 404; `permissionDenied`) or the gate's `QuotaError`.
    public func batchGetOrdersAnswer(packageName: String, orderIds: [String], purpose: CallPurpose) async throws
        -> (orders: [PlayOrder], body: Data)
    {
        let segments = ["androidpublisher", "v3", "applications", packageName, "orders:batchGet"]
        let label = PlayURL.label(method: "GET", segments: segments) + " (\(orderIds.count) ids)"
        func invalid(_ message: String) -> PlayAPIError {
            PlayAPIError(.invalidArgument, message, app: app, packageName: packageName, request: label)
        }
        guard !packageName.isEmpty else { throw invalid("empty package name") }
        guard (1...Self.maxOrderIds).contains(orderIds.count) else {
            throw invalid("orders.batchget takes 1 ... \(Self.maxOrderIds) order ids, not \(orderIds.count)")
        }
        guard Set(orderIds).count == orderIds.count else { throw invalid("order ids must be distinct") }
        let query = orderIds.map { "orderIds=" + PlayURL.percentEncode($0) }.joined(separator: "&")
        guard
            let base = PlayURL.make(
                base: configuration.baseURL, segments: ["androidpublisher", "v3", "applications", packageName]),
            let url = URL(string: base.absoluteString + "/orders:batchGet"),
            let withQuery = URL(string: url.absoluteString + "?" + query)
        else { throw invalid("cannot build the request URL") }
        let long = withQuery.absoluteString.utf8.count > Self.maxURLLength
        let endpoint = Endpoint(api: .googleOrders, packageName: packageName, url: long ? url : withQuery, label: label)
        let body = try await get(endpoint, purpose: purpose, formBody: long ? query : nil)
        let response = try decode(endpoint, body) {
            try OrdersFastDecoder.decode($0) ?? JSONDecoder().decode(BatchGetOrdersResponse.self, from: $0)
        }
        return (response.orders ?? [], body)
    }

    /// Each order's JSON text as the answer `body` sent it (its element of the `orders` array), for the `orders`
    /// decoded from it. A body the fast reader is not sure of is split by JSONSerialization instead (same members,
    /// not the same bytes); an order without either is written as decoded.
    public static func orderTexts(in body: Data, orders: [PlayOrder]) -> [String] {
        if let spans = OrdersFastDecoder.orderSpans(body), spans.count == orders.count {
            let base = body.startIndex
            return spans.map { String(decoding: body[base + $0.lowerBound..<base + $0.upperBound], as: UTF8.self) }
        }
        let elements =
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["orders"] as? [Any] ?? []
        return orders.indices.map { index in
            let data =
                index < elements.count && elements.count == orders.count
                ? try? JSONSerialization.data(withJSONObject: elements[index], options: [.sortedKeys])
                : try? JSONEncoder().encode(orders[index])
            return String(decoding: data ?? Data("{}".utf8), as: UTF8.self)
        }
    }

    /// URLs longer than this are sent as a form body instead (Google's clients switch at about 2 KB).
    public static let maxURLLength = 2048
}
