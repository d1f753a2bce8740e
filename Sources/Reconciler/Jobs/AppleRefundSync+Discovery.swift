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
        let connection = environment.connection
        let job = "apple_notifications:\(type.rawValue)"
        var checkpoint = try SyncCheckpoint.load(job: job, app: app.id, on: connection)
        let now = environment.now()
        let oldest = now.addingTimeInterval(-Self.retention(environment: StoreClients.appleEnvironment(app)))
        var start: Date
        var end: Date
        var token: String?
        if checkpoint.inFlight, let windowStart = checkpoint.windowStart, let windowEnd = checkpoint.windowEnd {
            start = max(windowStart, oldest)
            end = windowEnd
            token = checkpoint.pageToken
        } else {
            let wanted = checkpoint.highWater.map {
                $0.addingTimeInterval(-TimeInterval(configuration.sync.appleOverlap.seconds))
            }
            start = max(wanted ?? oldest, oldest)
            end = now
            if let highWater = checkpoint.highWater, highWater < oldest {
                environment.logger.error(
                    "gap: \(type.rawValue) notifications before \(oldest) are beyond Apple's history and cannot be read"
                )
                if !environment.dryRun {
                    try SyncGap.record(job: job, app: app.id, from: highWater, to: oldest, on: connection)
                }
            }
        }
        var restarted = false
        // Once a page held a payload that failed verification (it is quarantined), later pages are still stored but
        // the checkpoint stays before that page: the next run reads it again, so a payload spoiled on its way is not
        // skipped for good.
        var holdCheckpoint = false
        // The next page's call, travelling while this page is verified and stored (as in GoogleVoidedSync).
        var prefetched: Task<NotificationHistoryResponse, any Error>?
        defer { prefetched?.cancel() }
        func chain(from token: String?) -> PageChain {
            PageChain(
                app: app.id, api: .appleNotificationHistory, name: "\(type.rawValue) notifications", startingAt: token,
                maximumPages: PageChain.maximumApplePages)
        }
        var pages = chain(from: token)
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
                pages = chain(from: nil)
                continue
            }
            let next = try pages.follow(page.hasMore ? page.paginationToken : nil, rows: page.notificationHistory.count)
            if let next, !environment.shutdown.isRequested {
                // Used only after this page and its checkpoint commit; its errors surface when it is taken.
                prefetched = Task { [self] in try await notifications(request, token: next) }
            }
            var customers: [Notified] = []
            var refunds: [RefundRecord] = []
            var reversed: [(String, Date)] = []
            var quarantined: [QuarantinedRow] = []
            var verifiedUUIDs: [String] = []
            // Notification History may repeat a notification (Apple retries sends): one per notification UUID.
            let (items, repeats) = page.notificationHistory.mergingRepeats { item in
                item.signedPayload.map { Self.notificationKey($0) } ?? ""
            }
            environment.counters.add("merged_repeats", repeats)
            for item in items {
                guard let signed = item.signedPayload else { continue }
                let notification: VerifiedNotification
                let transaction: VerifiedTransaction
                switch await verifiedNotification(signed, in: environment) {
                case .verified(let outer, let inner): (notification, transaction) = (outer, inner)
                case .setAside(let odd):
                    quarantined.append(odd)
                    holdCheckpoint = true
                    continue
                }
                if let uuid = notification.payload.notificationUUID { verifiedUUIDs.append(uuid) }
                guard let original = transaction.payload.originalTransactionId, !original.isEmpty else {
                    quarantined.append(
                        QuarantinedRow(
                            job: .appleNotifications, naturalKey: notification.payload.notificationUUID, raw: signed,
                            reason: "notification \(notification.payload.notificationUUID ?? "(no UUID)"): "
                                + "originalTransactionId: missing in its signed transaction"))
                    continue
                }
                customers.append(
                    Notified(
                        originalTransactionId: original, signedAt: notification.payload.signedDate ?? now,
                        appTransactionId: transaction.payload.appTransactionId.flatMap { $0.isEmpty ? nil : $0 }))
                if type == .refundReversed, let id = transaction.payload.transactionId {
                    reversed.append((id, notification.payload.signedDate ?? now))
                } else {
                    switch RefundRecord.intake(
                        transaction, signed: notification.payload.data?.signedTransactionInfo)
                    {
                    case .refund(let row):
                        refunds.append(row)
                    case .notARefund: break
                    case .unstorable(let reason):
                        quarantined.append(
                            QuarantinedRow(
                                job: .appleNotifications, naturalKey: notification.payload.notificationUUID,
                                raw: signed,
                                reason:
                                    "notification \(notification.payload.notificationUUID ?? "(no UUID)"): \(reason)"
                            ))
                    }
                }
            }
            environment.counters.add("notifications", page.notificationHistory.count)
            if environment.dryRun {
                environment.counters.add("would_insert", try ledger.countNew(refunds, on: connection))
            } else {
                if let next {
                    checkpoint.windowStart = start
                    checkpoint.windowEnd = end
                    checkpoint.pageToken = next
                    checkpoint.pagesDone += 1
                } else {
                    checkpoint.highWater = end
                    checkpoint.windowStart = nil
                    checkpoint.windowEnd = nil
                    checkpoint.pageToken = nil
                    checkpoint.pagesDone = 0
                }
                try connection.transaction { connection in
                    try cursors.queueNotified(customers, reason: type.rawValue, on: connection)
                    let counts = try ledger.write(
                        refunds, quarantined: quarantined, job: .appleNotifications, runId: environment.runId,
                        logger: environment.logger, counters: environment.counters, on: connection)
                    environment.counters.add("inserted", counts.0)
                    environment.counters.add("updated", counts.1)
                    let marked = try ledger.markReversed(
                        transactionIds: reversed.map(\.0), at: reversed.map(\.1), on: connection)
                    environment.counters.add("reversed", marked)
                    try Quarantine.resolveLanded(
                        job: .appleNotifications, app: app.id, keys: verifiedUUIDs, note: "a verified copy landed",
                        on: connection)
                    if !holdCheckpoint { try checkpoint.save(on: connection) }
                }
            }
            token = next
            if next == nil { break }
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
