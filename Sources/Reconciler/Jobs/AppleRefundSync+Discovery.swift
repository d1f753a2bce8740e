import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting

extension AppleRefundSync {
    /// Pages Notification History for one type from its checkpoint: queues every customer named, stores refunds the
    /// notifications carry, marks reversals. Each page commits with its pagination token. The paging decisions are the
    /// ``TokenChainPager``'s (`AppleRefundSync+DiscoveryRunner.swift` performs them).
    func discover(_ type: NotificationTypeV2, in environment: JobEnvironment) async throws {
        let job = "apple_notifications:\(type.rawValue)"
        let checkpoint = try SyncCheckpoint.load(job: job, app: app.id, on: environment.connection)
        let now = environment.now()
        let (start, end, firstToken) = try window(
            of: type, job: job, checkpoint: checkpoint, now: now, in: environment)
        // A stop requested before the first call ends the job at once.
        try environment.checkShutdown()
        let discovery = Discovery(
            type: type, request: NotificationHistoryRequest(startDate: start, endDate: end, notificationType: type),
            window: (start, end), now: now, checkpoint: checkpoint)
        // Once a page held a payload that failed verification (it is quarantined), later pages are still stored but
        // the checkpoint stays before that page: the next run reads it again, so a payload spoiled on its way is not
        // skipped for good. The next page's call travels while this page is verified and stored.
        let pager = DiscoveryPager(
            notificationChain(type, from: firstToken), startingAt: firstToken, overlap: true, setAside: .holdCheckpoint)
        try await page(discovery, with: pager, in: environment)
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
        var highWater = checkpoint.highWater
        if checkpoint.inFlight, let windowStart = checkpoint.windowStart, let windowEnd = checkpoint.windowEnd {
            if windowEnd > oldest { return (max(windowStart, oldest), windowEnd, checkpoint.pageToken) }
            // A window left in flight longer than Apple keeps notifications (no run for months): what it did not
            // read is gone; a new window starts at the oldest Apple keeps.
            highWater = windowStart
        }
        let wanted = highWater.map {
            $0.addingTimeInterval(-TimeInterval(configuration.sync.appleOverlap.seconds))
        }
        if let highWater, highWater < oldest {
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
    static func advanced(_ checkpoint: SyncCheckpoint, window: (start: Date, end: Date), next: String?)
        -> SyncCheckpoint
    {
        var checkpoint = checkpoint
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
        return checkpoint
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
        UnverifiedNotification.uuid(signed) ?? signed
    }
}
