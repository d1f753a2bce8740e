import Foundation
import RateLimiting

extension AppStoreServerClient {
    /// Send Consumption Information v2: the answer to a `CONSUMPTION_REQUEST`. Apple answers `202 Accepted` with no
    /// body; a refused body is an ``AppStoreServerAPIError`` with Apple's error code (for example
    /// `InvalidCustomerConsentedError`).
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/send-consumption-information)
    /// - Parameters:
    ///   - transactionId: the transaction the request is about.
    ///   - body: the `ConsumptionRequest` JSON, as it is to be sent (and as the caller recorded it).
    /// - Throws: ``AppStoreServerAPIError``, `QuotaError`, or `CancellationError`.
    public func sendConsumptionInformation(transactionId: String, body: Data) async throws {
        let request = APIRequest(
            api: .appleConsumption, method: "PUT",
            pathSegments: ["inApps", "v2", "transactions", "consumption", transactionId], body: body,
            isTransactionLookup: false)
        let _: NoContent = try await send(request, environment: configuration.environment, purpose: .incremental)
    }
}

/// An answer with no body (202 Accepted).
struct NoContent: Decodable, Sendable {
    init() {}
}
