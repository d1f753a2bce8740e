import AppStoreServerAPI
import Foundation
import RateLimiting

/// Reading Notification History ahead of the job's task: calls and signature checks only, no database.
extension AppleRefundRequests {
    /// One chain of Notification History to read: a notification type over a window.
    struct HistoryWindow: Sendable {
        var type: NotificationTypeV2
        var start: Date
        var end: Date
    }

    /// One page of Notification History, read and verified.
    struct HistoryPage: Sendable {
        var type: NotificationTypeV2
        /// The notifications whose payloads passed verification, with their transactions.
        var verified: [(VerifiedNotification, VerifiedTransaction)]
        /// Notifications on the page.
        var count: Int
        /// Whether every payload on the page passed verification.
        var clean: Bool
        /// Whether it is its chain's last page.
        var isLast: Bool
    }

    /// Reads each window's chain in turn and hands on each page as it is verified.
    /// - Throws: `AppStoreServerAPIError` (a 401 at once), `QuotaError`, `ReconcilerError` (`.storeLoop`), or the
    ///   stop error when a stop was requested (checked before each page).
    func readHistory(
        _ windows: [HistoryWindow], shared: JobEnvironment.Shared, push: @Sendable (HistoryPage) -> Void
    ) async throws {
        for window in windows {
            var chain = PageChain(
                app: app.id, api: .appleNotificationHistory, name: "\(window.type.rawValue) notifications",
                startingAt: nil, maximumPages: PageChain.maximumApplePages)
            var token: String?
            repeat {
                if shared.shutdown.isRequested { throw StoppableQuotaGate.stopped }
                let request = NotificationHistoryRequest(
                    startDate: window.start, endDate: window.end, notificationType: window.type)
                let page = try await access.client.notificationHistory(
                    request, paginationToken: token, purpose: .incremental
                ).page
                token = try chain.follow(
                    page.hasMore ? page.paginationToken : nil, rows: page.notificationHistory.count)
                var verified: [(VerifiedNotification, VerifiedTransaction)] = []
                var clean = true
                for item in page.notificationHistory {
                    guard let signed = item.signedPayload else { continue }
                    if let pair = await verify(signed, shared: shared) { verified.append(pair) } else { clean = false }
                }
                push(
                    HistoryPage(
                        type: window.type, verified: verified, count: page.notificationHistory.count, clean: clean,
                        isLast: token == nil))
            } while token != nil
        }
    }

    /// Verifies a notification and its transaction as the refund sync does; a failure is logged and counted.
    func verify(_ signed: String, shared: JobEnvironment.Shared) async -> (VerifiedNotification, VerifiedTransaction)? {
        do {
            let verifier = try access.verifier(for: StoreClients.appleEnvironment(app))
            let notification = try await verifier.verifyNotification(signed)
            guard let inner = notification.payload.data?.signedTransactionInfo else {
                throw ReconcilerError(.failed, "the notification carries no signedTransactionInfo")
            }
            let transactionVerifier = try access.verifier(
                for: notification.payload.data?.environment ?? StoreClients.appleEnvironment(app))
            return (notification, try await transactionVerifier.verifyTransaction(inner))
        } catch {
            shared.counters.add("verification_failed")
            shared.logger.error(
                "notification \(AppleRefundSync.notificationKey(signed)): rejected, not stored: \(error)")
            return nil
        }
    }
}
