import AppStoreServerAPI
import Foundation
import Ledger
import Logging
import Postgres
import RateLimiting

/// `storerecon sync apple-refunds` and `backfill apple-refunds`.
///
/// Apple has no app-wide refund listing: Get Refund History is per customer. So the job (1) pages Notification
/// History for `REFUND`, `REFUND_REVERSED` and `REVOKE` since its checkpoint to learn which customers to ask (each
/// notification's verified transaction is stored at once, and reversals are marked), then (2) reads the refund
/// history of the queued customers first, then at most `sync.appleBackfillPerNight` customers of a pending backfill,
/// then of a rolling sweep of other known customers not read within `sync.appleRecheckAfter`, each from its stored
/// `revision`. Ids of one customer are grouped (see `AppleRefundSync+Customers.swift`), and one chain of refund
/// history serves them all. Customers are claimed with `FOR UPDATE SKIP LOCKED` and a short lease, so concurrent processes never
/// ask for the same customer twice. Every page commits with its checkpoint or revision.
public struct AppleRefundSync: Sendable {
    /// Which customers to read.
    public enum Mode: Sendable, Equatable {
        /// Discovery, then queued customers, then the sweep (`sync.appleSweepCustomers` per run).
        case incremental
        /// Every known customer (queued for a backfill), then the queue is drained.
        case backfillAll
        /// The customers (original transaction ids) listed.
        case backfillIds([String])
    }

    /// The job's name (locks, `job_run`).
    public static let job = "apple_refunds"
    /// Backfills' job name.
    public static let backfillJob = "apple_refunds_backfill"
    /// Notification types that name refunded customers.
    // Reversals last, so the refunds they reverse are usually stored already (others are kept until they are).
    static let discoveryTypes: [NotificationTypeV2] = [.refund, .revoke, .refundReversed]
    /// How far back Notification History reaches, minus a margin (one report saw 4000012 at about 170 days).
    static func retention(environment: Environment) -> TimeInterval {
        environment == .production ? 165 * 86_400 : 28 * 86_400
    }

    let app: AppConfig
    let configuration: Configuration
    let access: AppleStoreAccess
    let cursors: AppleRefundCursorStore
    let ledger: RefundLedger

    /// Creates the job for one Apple app.
    public init(app: AppConfig, configuration: Configuration, access: AppleStoreAccess) {
        self.app = app
        self.configuration = configuration
        self.access = access
        cursors = AppleRefundCursorStore(appId: app.id)
        ledger = RefundLedger(appId: app.id, prices: configuration.configuredPrices)
    }

    /// Runs the job.
    /// - Throws: `QuotaError`, `AppStoreServerAPIError` (a 401 as `.configuration`, at once: exit 78), `PostgresError`,
    ///   or `ReconcilerError(.temporary)` when stopped by a signal or when customers stayed "not found, retryable". Verification failures do not stop it: they are counted, logged and end the run with
    ///   exit 1 after everything else is done.
    public func run(_ mode: Mode, in environment: JobEnvironment) async throws {
        let purpose: CallPurpose = mode == .incremental ? .incremental : .backfill
        switch mode {
        case .incremental:
            for type in Self.discoveryTypes {
                try await discover(type, in: environment)
            }
            if !environment.dryRun { try prepareCustomers(in: environment) }
            try await drainQueue(.notified, purpose: purpose, in: environment)
            // A pending backfill's customers: at most this night's share of them, within the backfill's quota share.
            if configuration.sync.appleBackfillPerNight > 0 {
                try await drainQueue(
                    .backfill, limit: configuration.sync.appleBackfillPerNight, purpose: .backfill, in: environment)
                if !environment.dryRun { try cursors.closeBackfillIfDrained(on: environment.connection) }
            }
            if configuration.sync.appleSweepCustomers > 0 {
                try await sweep(limit: configuration.sync.appleSweepCustomers, in: environment)
            }
        case .backfillAll where environment.dryRun:
            try await readKnownCustomersDirectly(purpose: purpose, in: environment)
        case .backfillIds(let ids) where environment.dryRun:
            try await readDirectly(ids, purpose: purpose, in: environment)
        case .backfillAll:
            try prepareCustomers(in: environment)
            try cursors.queueBackfillAll(recheckSeconds: recheckSeconds, on: environment.connection)
            try await drainQueue(.queued, purpose: purpose, in: environment)
            try cursors.closeBackfillIfDrained(on: environment.connection)
        case .backfillIds(let ids):
            try prepareCustomers(in: environment)
            try cursors.queueBackfill(ids: ids, on: environment.connection)
            try await drainQueue(.queued, purpose: purpose, in: environment)
            try cursors.closeBackfillIfDrained(on: environment.connection)
        }
        environment.progress?.finish()
        try throwForCustomersLeft(in: environment)
    }

    /// A dry run queues nothing (a write), so it reads the known customers directly, a batch at a time.
    private func readKnownCustomersDirectly(purpose: CallPurpose, in environment: JobEnvironment) async throws {
        var after = ""
        while true {
            let ids = try environment.connection.query(
                """
                SELECT store_id FROM subscription WHERE app_id = $1 AND store_id > $2 ORDER BY store_id LIMIT 1000
                """, [app.id, after]
            ).map { try $0.decode("store_id", as: String.self) }
            guard let last = ids.last else { break }
            try await readDirectly(ids, purpose: purpose, in: environment)
            after = last
        }
    }

    /// Ends the run with an error when customers could not be read, payloads failed verification, or Apple kept
    /// answering "not found, retryable".
    private func throwForCustomersLeft(in environment: JobEnvironment) throws {
        let customerErrors = environment.counters["customer_errors"]
        let failed = environment.counters["verification_failed"]
        if customerErrors > 0 && failed == 0 {
            throw ReconcilerError(
                .failed, "\(customerErrors) customers could not be read (see the lines above); they stay queued")
        }
        if failed > 0 {
            throw ReconcilerError(
                .failed,
                "\(failed) signed payloads failed verification and were not stored (see the lines above); "
                    + "everything else was saved")
        }
        let retryLater = environment.counters["customers_retry_later"]
        if retryLater > 0 {
            throw ReconcilerError(
                .temporary,
                "\(retryLater) customers are 'not found, retryable' at Apple (4040002/4040004/4040006) after retries; "
                    + "they stay queued for the next run")
        }
    }

    /// Groups known customers before a run reads anyone (see ``AppleRefundCursorStore/prepareCustomers(on:)``).
    func prepareCustomers(in environment: JobEnvironment) throws {
        environment.counters.add("customers_grouped", try cursors.prepareCustomers(on: environment.connection))
    }

    typealias ClaimKind = AppleRefundCursorStore.ClaimKind
    typealias Notified = AppleRefundCursorStore.Notified

    /// `sync.appleRecheckAfter` in seconds.
    var recheckSeconds: Double { Double(configuration.sync.appleRecheckAfter.seconds) }

    /// Dry runs: reads each customer's history from its stored revision, claiming and queuing nothing.
    private func readDirectly(_ ids: [String], purpose: CallPurpose, in environment: JobEnvironment) async throws {
        for id in ids {
            try environment.checkShutdown()
            let revision = try cursors.revision(of: id, on: environment.connection)
            try await readHistorySafely(customer: id, revision: revision, purpose: purpose, in: environment)
        }
    }
}
