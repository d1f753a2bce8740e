import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting

extension AppleRefundSync {
    /// Pages Notification History for one type from its checkpoint: queues every customer named, stores refunds the
    /// notifications carry, marks reversals. Each page commits with its pagination token.
    func discover(_ type: NotificationTypeV2, in environment: JobEnvironment) async throws {
        let job = "apple_notifications:\(type.rawValue)"
        var checkpoint = try SyncCheckpoint.load(job: job, app: app.id, on: environment.connection)
        let now = environment.now()
        let (start, end, firstToken) = try window(
            of: type, job: job, checkpoint: checkpoint, now: now, in: environment)
        var token = firstToken
        var restarted = false
        // Once a page held a payload that failed verification (it is quarantined), later pages are still stored but
        // the checkpoint stays before that page: the next run reads it again, so a payload spoiled on its way is not
        // skipped for good.
        var holdCheckpoint = false
        // The next page's call, travelling while this page is verified and stored (as in GoogleVoidedSync).
        var prefetched: Task<NotificationHistoryResponse, any Error>?
        defer { prefetched?.cancel() }
        var pages = notificationChain(type, from: token)
        while true {
            // A stop request lets the call already travelling finish and its page be saved (the quota is spent).
            if prefetched == nil { try environment.checkShutdown() }
            let request = NotificationHistoryRequest(startDate: start, endDate: end, notificationType: type)
            let page: NotificationHistoryResponse
            do {
                if let call = prefetched {
                    prefetched = nil
                    page = try await call.value
                } else {
                    page = try await notifications(request, token: token)
                }
            } catch let error as AppStoreServerAPIError
                where token != nil && !restarted
                && (error.apiErrorCode == .paginationTokenExpired || error.apiErrorCode == .invalidPaginationToken)
            {
                environment.logger.warning("the notification-history token was refused; restarting the window")
                restarted = true
                token = nil
                pages = notificationChain(type, from: nil)
                continue
            }
            let next = try pages.follow(page.hasMore ? page.paginationToken : nil, rows: page.notificationHistory.count)
            if let next, !environment.shutdown.isRequested {
                // Used only after this page and its checkpoint commit; its errors surface when it is taken.
                prefetched = Task { [self] in try await notifications(request, token: next) }
            }
            let notified = await verifiedPage(page, type: type, now: now, in: environment)
            holdCheckpoint = holdCheckpoint || notified.setAside
            if environment.dryRun {
                let new = try ledger.countNew(notified.refunds, on: environment.connection)
                environment.counters.add("would_insert", new)
            } else {
                Self.advance(&checkpoint, window: (start, end), next: next)
                try storeNotified(notified, type: type, checkpoint: holdCheckpoint ? nil : checkpoint, in: environment)
            }
            token = next
            if next == nil { break }
        }
    }

    /// The pages of one type's notifications from `token`, bounded as Apple's paging is.
    private func notificationChain(_ type: NotificationTypeV2, from token: String?) -> PageChain {
        PageChain(
            app: app.id, api: .appleNotificationHistory, name: "\(type.rawValue) notifications", startingAt: token,
            maximumPages: PageChain.maximumApplePages)
    }

    /// Where a type's paging starts: the window in flight and its token, else from the high-water mark less the
    /// overlap up to now. Never before what Apple keeps: a high-water mark older than that leaves a gap, recorded.
    private func window(
        of type: NotificationTypeV2, job: String, checkpoint: SyncCheckpoint, now: Date, in environment: JobEnvironment
    ) throws -> (start: Date, end: Date, token: String?) {
        let oldest = now.addingTimeInterval(-Self.retention(environment: StoreClients.appleEnvironment(app)))
        if checkpoint.inFlight, let windowStart = checkpoint.windowStart, let windowEnd = checkpoint.windowEnd {
            return (max(windowStart, oldest), windowEnd, checkpoint.pageToken)
        }
        let wanted = checkpoint.highWater.map {
            $0.addingTimeInterval(-TimeInterval(configuration.sync.appleOverlap.seconds))
        }
        if let highWater = checkpoint.highWater, highWater < oldest {
            environment.logger.error(
                "gap: \(type.rawValue) notifications before \(oldest) are beyond Apple's history and cannot be read"
            )
            if !environment.dryRun {
                try SyncGap.record(job: job, app: app.id, from: highWater, to: oldest, on: environment.connection)
            }
        }
        return (max(wanted ?? oldest, oldest), now, nil)
    }

    /// The checkpoint after a page: the window in flight with the next page's token, or, after the last page, the
    /// window's end as the high-water mark.
    static func advance(_ checkpoint: inout SyncCheckpoint, window: (start: Date, end: Date), next: String?) {
        if let next {
            checkpoint.windowStart = window.start
            checkpoint.windowEnd = window.end
            checkpoint.pageToken = next
            checkpoint.pagesDone += 1
        } else {
            checkpoint.highWater = window.end
            checkpoint.windowStart = nil
            checkpoint.windowEnd = nil
            checkpoint.pageToken = nil
            checkpoint.pagesDone = 0
        }
    }

    /// One page of Notification History.
    func notifications(_ request: NotificationHistoryRequest, token: String?) async throws
        -> NotificationHistoryResponse
    {
        try await access.client.notificationHistory(request, paginationToken: token, purpose: .incremental).page
    }

    /// Verifies a notification and the transaction inside it; a failure is counted and becomes a quarantine entry
    /// (never stored in the ledger).
    func verifiedNotification(_ signed: String, in environment: JobEnvironment) async -> VerifiedOrSetAside {
        var uuid: String?
        do {
            let verifier = try access.verifier(for: StoreClients.appleEnvironment(app))
            let notification = try await verifier.verifyNotification(signed)
            uuid = notification.payload.notificationUUID
            guard let inner = notification.payload.data?.signedTransactionInfo else {
                throw ReconcilerError(.failed, "the notification carries no signedTransactionInfo")
            }
            let transactionVerifier = try access.verifier(
                for: notification.payload.data?.environment ?? StoreClients.appleEnvironment(app))
            return .verified(notification, try await transactionVerifier.verifyTransaction(inner))
        } catch {
            environment.counters.add("verification_failed")
            let key = uuid ?? Self.notificationKey(signed)
            return .setAside(
                QuarantinedRow(
                    job: .appleNotifications, naturalKey: key, raw: signed,
                    reason: "notification \(key): rejected, not stored: \(error)"))
        }
    }

    /// A verified notification with its transaction, or the quarantine entry of one that failed.
    enum VerifiedOrSetAside {
        case verified(VerifiedNotification, VerifiedTransaction)
        case setAside(QuarantinedRow)
    }

    /// A notification's identity for merging repeats: its `notificationUUID` as the unverified payload says (a
    /// forged repeat is merged into nothing it could change: every kept payload is verified), else the JWS itself.
    static func notificationKey(_ signed: String) -> String {
        let parts = signed.split(separator: ".", omittingEmptySubsequences: false)
        struct UUIDOnly: Decodable { var notificationUUID: String? }
        var base64 = parts.count == 3 ? parts[1].replacingOccurrences(of: "-", with: "+") : ""
        base64 = base64.replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        if parts.count == 3, let data = Data(base64Encoded: base64),
            let uuid = (try? JSONDecoder().decode(UUIDOnly.self, from: data))?.notificationUUID
        {
            return uuid
        }
        return signed
    }
}
