import Foundation
import RateLimiting

extension AppStoreServerClient {
    /// Get Notification History: one page (at most 20) of the notifications Apple sent, or tried to send, in the
    /// request's window. Send the same body with the returned `paginationToken` while `hasMore`.
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/get-notification-history)
    /// - Parameters:
    ///   - request: the window and filters (for refunds: `notificationType` REFUND, REFUND_REVERSED or REVOKE).
    ///   - paginationToken: the token from the previous page, or `nil` for the first.
    ///   - purpose: incremental or backfill.
    /// - Returns: the page and the environment that answered.
    /// - Throws: ``AppStoreServerAPIError``, `QuotaError`, or `CancellationError`.
    public func notificationHistory(
        _ request: NotificationHistoryRequest, paginationToken: String?, purpose: CallPurpose
    ) async throws -> (page: NotificationHistoryResponse, environment: Environment) {
        let body: Data
        do {
            body = try JSONEncoder().encode(request)
        } catch {
            throw AppStoreServerAPIError(
                code: .configuration, message: "cannot encode the notification history request")
        }
        let apiRequest = APIRequest(
            api: .appleNotificationHistory, method: "POST", pathSegments: ["inApps", "v1", "notifications", "history"],
            query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: body, isTransactionLookup: false)
        let (page, environment) = try await perform(apiRequest, purpose: purpose, as: NotificationHistoryResponse.self)
        return (page, environment)
    }
}
