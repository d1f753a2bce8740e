import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres

/// `storerecon quarantine list | retry | drop`: what the operator does with rows set aside.
///
/// A retry re-runs a row's mapping on its stored raw form and writes it through the job's normal path (the same
/// intake, the same ledger writes): a row that now lands is marked `landed`; one that still cannot be stored stays
/// open with its new reason. Run it after a fix (a new version that knows a value, a schema change, a root
/// certificate corrected). No store is called.
public struct QuarantineRetry {
    /// One quarantined row, as `quarantine list` shows it.
    public typealias Entry = QuarantineEntry

    /// What a retry did.
    public struct Outcome: Sendable, Equatable {
        /// Rows that landed in the ledger (or, for a notification, queued its customer).
        public var landed = 0
        /// Rows that still cannot be stored (their reason is updated).
        public var stillRefused = 0
    }

    let configuration: Configuration
    let connection: PostgresConnection
    let logger: Logger
    /// The Apple verifiers of an app (no store call is made).
    let appleAccess: (AppConfig) throws -> AppleStoreAccess

    /// Creates the command's worker.
    public init(
        configuration: Configuration, connection: PostgresConnection, logger: Logger,
        appleAccess: @escaping (AppConfig) throws -> AppleStoreAccess
    ) {
        self.configuration = configuration
        self.connection = connection
        self.logger = logger
        self.appleAccess = appleAccess
    }

    /// Quarantined rows, open ones only unless `all`; their payloads only `withRaw`.
    public static func list(
        app: String?, all: Bool, id: Int64? = nil, withRaw: Bool = true, on connection: PostgresConnection
    ) throws -> [Entry] {
        try Quarantine.entries(app: app, all: all, id: id, withRaw: withRaw, on: connection)
    }

    /// Abandons open rows (the one with `id`, or all of them), of `app` when given, recording why. Returns how many.
    public static func drop(id: Int64?, app: String?, reason: String, on connection: PostgresConnection) throws -> Int {
        try Quarantine.drop(id: id, app: app, reason: reason, on: connection)
    }

    /// Re-applies open rows (one, or all of the configured apps or of one app) through their jobs' normal paths.
    public func retry(id: Int64?, app: String?) async throws -> Outcome {
        var outcome = Outcome()
        for entry in try Self.list(app: app, all: false, id: id, on: connection) {
            guard let config = configuration.apps.first(where: { $0.id == entry.app }) else {
                logger.warning("quarantine #\(entry.id): app \(entry.app) is not configured; left as it is")
                continue
            }
            let context = try contextOf(entry.id)
            let landed: Bool
            switch QuarantinedRow.Job(rawValue: entry.job) {
            case .googleVoided: landed = try retryVoided(entry, app: config)
            case .appleRefunds: landed = try await retryAppleRefund(entry, app: config, context: context)
            case .appleNotifications: landed = try await retryNotification(entry, app: config)
            case .appleRefundRequests: landed = try await retryRefundRequest(entry, app: config)
            case .googleOrders:
                landed = try GoogleOrderStore(appId: config.id, prices: configuration.configuredPrices)
                    .reprice(orderId: entry.naturalKey ?? "", logger: logger, on: connection)
            case .none:
                logger.warning("quarantine #\(entry.id): \(entry.job) rows cannot be retried; drop it with a reason")
                landed = false
            }
            if landed {
                try Quarantine.markLanded(id: entry.id, on: connection)
                outcome.landed += 1
                logger.info("quarantine #\(entry.id): landed")
            } else {
                outcome.stillRefused += 1
            }
        }
        return outcome
    }

    private func contextOf(_ id: Int64) throws -> [String: String] {
        try Quarantine.context(id: id, on: connection)
    }

    /// A Google row: decoded and mapped as a page's row, written as a page's rows are.
    private func retryVoided(_ entry: Entry, app: AppConfig) throws -> Bool {
        let page = try VoidedPurchasesListResponse(json: Data(#"{"voidedPurchases":[\#(entry.raw)]}"#.utf8))
        let (records, quarantined, _) = RefundRecord.intake(page)
        try connection.transaction { connection in
            _ = try ledger(app).write(
                records, quarantined: quarantined, job: .googleVoided, runId: nil, logger: logger,
                counters: JobCounters(), on: connection)
        }
        guard quarantined.isEmpty, let record = records.first else { return false }
        return
            !(try connection.query(
                "SELECT 1 AS one FROM refund WHERE app_id = $1 AND order_id = $2 AND part_key = $3",
                [app.id, record.orderId, record.part.key]
            ).isEmpty)
    }

    /// The ledger writer of an app: the same one its jobs write through.
    private func ledger(_ app: AppConfig) -> RefundLedger {
        RefundLedger(appId: app.id, prices: configuration.configuredPrices)
    }

    /// An Apple signed transaction: verified again (a corrected root certificate), mapped and written.
    private func retryAppleRefund(_ entry: Entry, app: AppConfig, context: [String: String]) async throws -> Bool {
        let environment = context["environment"].map { Environment(rawValue: $0) } ?? StoreClients.appleEnvironment(app)
        // The row's environment (sandbox, since turned off) is the row's matter: its verifier inside the `do`.
        let access = try checkedAccess(app)
        let verified: VerifiedTransaction
        do {
            verified = try await access.verifier(for: environment).verifyTransaction(entry.raw)
        } catch {
            try updateReason(entry.id, "the signed transaction failed verification again: \(error)")
            return false
        }
        switch RefundRecord.intake(verified, signed: entry.raw) {
        case .refund(let record):
            try connection.transaction { connection in
                _ = try ledger(app).write(
                    [record], quarantined: [], job: .appleRefunds, runId: nil, logger: logger,
                    counters: JobCounters(), on: connection)
            }
            if try isLanded(entry.id) { return true }
            return try refundExists(app: app.id, id: record.orderId)
        case .notARefund:
            try updateReason(entry.id, "verified, but it is not a refund: nothing to store (drop it)")
            return false
        case .unstorable(let reason):
            try updateReason(entry.id, reason)
            return false
        }
    }

    /// An Apple notification: verified again, then stored as a page of Notification History is: its customer
    /// queued (the next refund sync reads the customer's refund history), its refund written, its reversal marked.
    private func retryNotification(_ entry: Entry, app: AppConfig) async throws -> Bool {
        let access = try checkedAccess(app)
        let notification: VerifiedNotification
        let transaction: VerifiedTransaction
        do {
            notification = try await access.verifier(for: StoreClients.appleEnvironment(app))
                .verifyNotification(entry.raw)
            guard let inner = notification.payload.data?.signedTransactionInfo else {
                try updateReason(entry.id, "the notification carries no signedTransactionInfo")
                return false
            }
            transaction = try await access.verifier(
                for: notification.payload.data?.environment ?? StoreClients.appleEnvironment(app)
            ).verifyTransaction(inner)
        } catch {
            try updateReason(entry.id, "the notification failed verification again: \(error)")
            return false
        }
        var page = AppleRefundSync.NotifiedPage()
        page.add(
            notification, transaction, signed: entry.raw, type: notification.payload.notificationType ?? .refund,
            now: Date())
        let ledger = ledger(app)
        try connection.transaction { connection in
            try AppleRefundCursorStore(appId: app.id).queueNotified(
                page.customers, reason: "quarantine_retry", on: connection)
            _ = try ledger.write(
                page.refunds, quarantined: [], job: .appleRefunds, runId: nil, logger: logger, counters: JobCounters(),
                on: connection)
            _ = try ledger.markReversed(
                transactionIds: page.reversed.map(\.0), at: page.reversed.map(\.1), on: connection)
        }
        if let unstorable = page.quarantined.first {
            try updateReason(entry.id, unstorable.reason)
            return false
        }
        return try page.refunds.allSatisfy { try refundExists(app: app.id, id: $0.orderId) }
    }

    /// A notification `run refund-requests` set aside: verified again and stored as its page would have been (a
    /// new request, which the next run answers or records missed, or the outcome it says).
    private func retryRefundRequest(_ entry: Entry, app: AppConfig) async throws -> Bool {
        let access = try checkedAccess(app)
        let job = AppleRefundRequests(app: app, configuration: configuration, access: access)
        let verified: (VerifiedNotification, VerifiedTransaction)
        do {
            verified = try await job.verify(entry.raw)
        } catch {
            try updateReason(entry.id, "the notification failed verification again: \(error)")
            return false
        }
        guard let type = verified.0.payload.notificationType, AppleRefundRequests.types.contains(type) else {
            try updateReason(entry.id, "verified, but not a refund request or its outcome: nothing to store (drop it)")
            return false
        }
        try connection.transaction { connection in
            _ = try job.storePage([verified], type: type, runId: nil, counters: JobCounters(), on: connection)
        }
        return true
    }

    /// The app's Apple access with its own environment's verifier loaded, before any row is tried: a configuration
    /// error (a key or root certificate file missing) stops the command rather than being written over each row's
    /// reason.
    private func checkedAccess(_ app: AppConfig) throws -> AppleStoreAccess {
        let access = try appleAccess(app)
        _ = try access.verifier(for: StoreClients.appleEnvironment(app))
        return access
    }

    private func isLanded(_ id: Int64) throws -> Bool {
        try Quarantine.isLanded(id: id, on: connection)
    }

    private func refundExists(app: String, id: String) throws -> Bool {
        try RefundLedger(appId: app).hasWholeRefund(orderId: id, on: connection)
    }

    private func updateReason(_ id: Int64, _ reason: String) throws {
        try Quarantine.updateReason(id: id, reason, on: connection)
    }
}
