import AppStoreServerAPI
import Foundation
import Ledger
import Postgres

/// One page of Notification History, verified and sorted, then stored.
extension AppleRefundSync {
    /// What a page of notifications holds, once verified.
    struct NotifiedPage {
        /// The customers the notifications name, to queue for a Refund History read.
        var customers: [Notified] = []
        var refunds: [RefundRecord] = []
        /// Transactions a `REFUND_REVERSED` names, with when it was signed.
        var reversed: [(String, Date)] = []
        var quarantined: [QuarantinedRow] = []
        /// Notifications verified (a copy set aside before is resolved).
        var verifiedUUIDs: [String] = []
        /// The notifications that failed verification.
        var unverified: [QuarantinedRow] = []
        /// A payload failed verification for the first time: the checkpoint must stay before this page.
        var setAside = false
    }

    /// Verifies a page's notifications (one per notification UUID: Apple may send one again) and sorts them.
    func verifiedPage(
        _ page: NotificationHistoryResponse, type: NotificationTypeV2, now: Date, in environment: JobEnvironment
    ) async -> NotifiedPage {
        var notified = NotifiedPage()
        let (items, repeats) = page.notificationHistory.mergingRepeats { item in
            item.signedPayload.map { Self.notificationKey($0) } ?? ""
        }
        environment.counters.add("merged_repeats", repeats)
        for item in items {
            guard let signed = item.signedPayload else { continue }
            switch await verifiedNotification(signed, in: environment) {
            case .verified(let notification, let transaction):
                notified.add(notification, transaction, signed: signed, type: type, now: now)
            case .setAside(let odd):
                notified.quarantined.append(odd)
                notified.unverified.append(odd)
                notified.setAside = true
            }
        }
        environment.counters.add("notifications", page.notificationHistory.count)
        UnreadableItems.report(
            page.unreadableItems, page: "\(type.rawValue) notification history", counters: environment.counters,
            logger: environment.logger)
        return notified
    }

    /// Stores a sorted page in one transaction: the customers queued, the refunds, the reversals, what was set aside,
    /// and `checkpoint` (nil: kept where it is).
    func storeNotified(
        _ notified: NotifiedPage, type: NotificationTypeV2, checkpoint: SyncCheckpoint?, in environment: JobEnvironment
    ) throws {
        let (app, ledger, cursors) = (app.id, ledger, cursors)
        try environment.connection.transaction { connection in
            try cursors.queueNotified(notified.customers, reason: type.rawValue, on: connection)
            // A refund the database refuses is set aside as a signed transaction, Refund History's form, so that
            // `quarantine retry` verifies and writes it as one.
            let counts = try ledger.write(
                notified.refunds, quarantined: notified.quarantined, job: .appleRefunds,
                runId: environment.runId, logger: environment.logger, counters: environment.counters, on: connection)
            environment.counters.add("inserted", counts.0)
            environment.counters.add("updated", counts.1)
            let marked = try ledger.markReversed(
                transactionIds: notified.reversed.map(\.0), at: notified.reversed.map(\.1), on: connection)
            environment.counters.add("reversed", marked)
            try Quarantine.resolveLanded(
                job: .appleNotifications, app: app, keys: notified.verifiedUUIDs, note: "a verified copy landed",
                on: connection)
            try checkpoint?.save(on: connection)
        }
    }
}

extension AppleRefundSync.NotifiedPage {
    /// Sorts one verified notification: its customer, and its refund or reversal (or why it cannot be stored).
    mutating func add(
        _ notification: VerifiedNotification, _ transaction: VerifiedTransaction, signed: String,
        type: NotificationTypeV2, now: Date
    ) {
        let uuid = notification.payload.notificationUUID
        if let uuid { verifiedUUIDs.append(uuid) }
        func setAside(_ reason: String) {
            quarantined.append(
                QuarantinedRow(
                    job: .appleNotifications, naturalKey: uuid, raw: signed,
                    reason: "notification \(uuid ?? "(no UUID)"): \(reason)"))
        }
        guard let original = transaction.payload.originalTransactionId, !original.isEmpty else {
            return setAside("originalTransactionId: missing in its signed transaction")
        }
        let signedAt = notification.payload.signedDate ?? now
        customers.append(
            AppleRefundSync.Notified(
                originalTransactionId: original, signedAt: signedAt,
                appTransactionId: transaction.payload.appTransactionId.flatMap { $0.isEmpty ? nil : $0 }))
        if type == .refundReversed, let id = transaction.payload.transactionId {
            reversed.append((id, signedAt))
            return
        }
        switch RefundRecord.intake(transaction, signed: notification.payload.data?.signedTransactionInfo) {
        case .refund(let row): refunds.append(row)
        case .notARefund: break
        case .unstorable(let reason): setAside(reason)
        }
    }
}
