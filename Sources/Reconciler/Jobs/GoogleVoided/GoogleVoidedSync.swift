import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// `storerecon sync google-voided` and `backfill google-voided`: pages Google's Voided Purchases API over a window
/// and stores every row in the refund ledger.
///
/// Each page's rows and the checkpoint that follows them (the next page token, or the new high-water mark when the
/// window is drained) commit in one transaction, so `kill -9` at any moment loses nothing committed and a rerun
/// fetches again only the page being stored and the next one, whose call travels meanwhile. Rows are upserted by
/// natural key, so overlapping windows and reruns never duplicate anything. See ``VoidedWindowPlanner`` for the window arithmetic.
public struct GoogleVoidedSync: Sendable {
    /// Which window to drain.
    public enum Mode: Sendable, Equatable {
        /// `[checkpoint − overlap, now − skew]` (the first run takes all 30 days).
        case incremental
        /// An explicit window, with the backfill's share of the daily budget.
        case backfill(since: Date, until: Date?)

        /// A backfill's bounds as asked, which a window in flight must have been planned for to be resumed; nil for
        /// the nightly sync.
        var requestKey: String? {
            guard case .backfill(let since, let until) = self else { return nil }
            return "since=\(PostgresTimestamp.millis(since)) until=\(until.map(PostgresTimestamp.millis) ?? "open")"
        }
    }

    /// What a run did.
    public struct Summary: Sendable, Equatable {
        /// Pages fetched.
        public var pages = 0
        /// Rows received.
        public var rows = 0
        /// Rows new to the ledger.
        public var inserted = 0
        /// Rows whose stored payload changed.
        public var updated = 0
        /// Rows set aside in the quarantine (they could not be stored).
        public var quarantined = 0
        /// Whether the window was drained (the checkpoint advanced).
        public var drained = false
        /// A window older than the store keeps, if one was found.
        public var gap: (from: Date, to: Date)?
        /// What the Orders API calls for the amounts did.
        public var orders = GoogleOrderAmounts.Summary()

        public static func == (lhs: Summary, rhs: Summary) -> Bool {
            lhs.pages == rhs.pages && lhs.rows == rhs.rows && lhs.inserted == rhs.inserted
                && lhs.updated == rhs.updated && lhs.quarantined == rhs.quarantined && lhs.drained == rhs.drained
                && lhs.gap?.from == rhs.gap?.from && lhs.gap?.to == rhs.gap?.to
        }
    }

    /// Checkpoint name of the incremental job.
    public static let job = "google_voided"
    /// Checkpoint name of backfills.
    public static let backfillJob = "google_voided_backfill"
    /// Google's largest page.
    public static let pageSize = 1000

    let app: AppConfig
    let client: PlayDeveloperClient
    let planner: VoidedWindowPlanner
    let ledger: RefundLedger
    /// Fetches what Google refunded for the rows of each stored page.
    let orderAmounts: GoogleOrderAmounts
    /// `sync.googleSlices`: the most slices a window is paged in.
    let sliceCap: Int
    /// Calls the shortest quota window allows at once (30 for the published 30 per 30 s), nil when unlimited.
    let burst: Int?
    /// The daily cap of voided purchases and the backfills' share of it, for the progress line.
    let quotaCaps: (daily: Int?, backfill: Int?)
    /// Whether an incremental run ends by re-reading known orders for refunds Google made without revoking them
    /// (`run nightly` does that in a job of its own after the recheck, which learns the current orders).
    public var rereadsKnownOrders = true

    /// Creates the job for one Google app.
    public init(app: AppConfig, configuration: Configuration, client: PlayDeveloperClient) {
        self.app = app
        self.client = client
        planner = VoidedWindowPlanner(
            overlap: TimeInterval(configuration.sync.googleOverlap.seconds),
            skew: TimeInterval(configuration.sync.googleSkew.seconds))
        ledger = RefundLedger(appId: app.id, prices: configuration.configuredPrices)
        orderAmounts = GoogleOrderAmounts(app: app, client: client, prices: configuration.configuredPrices)
        let policy = configuration.quotaPolicy
        let limit = policy.limit(app: app.id, api: .googleVoidedPurchases)
        quotaCaps = (limit?.dailyCap, policy.backfillCap(of: limit))
        sliceCap = configuration.sync.googleSlices
        burst = limit?.windows.min { $0.window < $1.window }?.count
    }

    /// Runs the job.
    /// - Throws: `QuotaError` / `PlayAPIError` from the store, `PostgresError`, or `ReconcilerError(.temporary)`
    ///   when stopped by a signal; whatever was committed stays.
    public func run(_ mode: Mode, in environment: JobEnvironment) async throws -> Summary {
        let started = ContinuousClock.now
        let connection = environment.connection
        let job = mode == .incremental ? Self.job : Self.backfillJob
        let purpose: CallPurpose = mode == .incremental ? .incremental : .backfill
        let loaded = try SyncCheckpoint.load(job: job, app: app.id, on: connection)
        var logger = environment.logger
        logger[metadataKey: "job"] = "\(job)"
        let opened = try await openWindow(
            mode, job: job, purpose: purpose, checkpoint: loaded, logger: logger, in: environment)
        var summary = Summary()
        summary.gap = opened.gap
        let window = Window(
            job: job, purpose: purpose, start: opened.start, end: opened.end, started: started,
            readBefore: opened.checkpoint.highWater)
        // Where this run's backlog starts (GoogleOrderStore+Backlog.swift). Orders this run asks are not asked again
        // at its end (those Google still calls pending wait for a later run).
        let mark = try orderAmounts.orders.openBacklog(initialize: !environment.dryRun, on: connection)
        let paging = PagerStateMachine(
            app: app.id, windowEnd: window.end, slices: opened.slices, checkpoint: opened.checkpoint,
            sliceCap: sliceCap,
            burst: burst, dryRun: environment.dryRun)
        let paged = try await GoogleIntakeRunner(sync: self, window: window, environment: environment)
            .run(GoogleIntakeMachine(paging: paging, summary: summary))
        summary = paged.finish().summary
        summary.orders = try await priceLeftovers(mode, mark: mark, queue: paged.orders, in: environment).summary
        environment.progress?.finish()
        summary.drained = true
        log(summary, end: window.end, logger: logger, dryRun: environment.dryRun)
        return summary
    }

    /// After the paging: refunds still without the store's amount from earlier runs (pending at Google, not fetched,
    /// or stored by a run that stopped before asking), then, for the nightly sync, known orders re-read for refunds
    /// Google made without revoking (they never reach the voided list).
    private func priceLeftovers(
        _ mode: Mode, mark: GoogleOrderStore.BacklogMark, queue paged: GoogleOrderAmounts.OrdersQueue,
        in environment: JobEnvironment
    ) async throws -> GoogleOrderAmounts.OrdersQueue {
        guard !environment.dryRun else { return paged }
        let purpose: CallPurpose = mode == .incremental ? .incremental : .backfill
        var queue = try await orderAmounts.priceBacklog(
            since: nil, fetchedBefore: mark.runStarted, mark: mark, queue: paged, purpose: purpose, in: environment
        ).queue
        if !queue.summary.stopped, mode == .incremental, rereadsKnownOrders {
            queue.queue(try orderAmounts.orders.knownOrders(limit: Self.knownOrdersPerRun, on: environment.connection))
            queue = try await orderAmounts.drain(queue, purpose: purpose, in: environment)
        }
        return queue
    }

    /// The run's closing lines: the amounts asked, the pages stored, the rows set aside.
    private func log(_ summary: Summary, end: Date, logger: Logger, dryRun: Bool) {
        if summary.orders.calls > 0 {
            logger.info(
                "amounts: \(summary.orders.calls) Orders API calls for \(summary.rows) voided rows (\(Self.perThousand(summary.orders.calls, summary.rows)) per 1000), \(summary.orders.priced) refunds priced by the store, \(summary.orders.pending) pending, \(summary.orders.notFound) orders not found"
            )
        }
        logger.info(
            "\(dryRun ? "dry run: " : "")\(summary.pages) pages, \(summary.rows) rows, \(summary.inserted) \(dryRun ? "would be new" : "new"), \(summary.updated) updated; checkpoint \(dryRun ? "unchanged" : "at \(Self.text(end))")"
        )
        if summary.quarantined > 0 {
            logger.warning(
                "\(summary.quarantined) voided purchases could not be stored and were quarantined (see the lines above; `storerecon quarantine list`); everything else was saved"
            )
        }
    }

    /// Known orders re-read per run for refunds without revocation (10 calls of 1000).
    static let knownOrdersPerRun = 10_000

    /// `calls` per 1000 `rows`, with two decimals.
    static func perThousand(_ calls: Int, _ rows: Int) -> String {
        guard rows > 0 else { return "-" }
        let hundredths = (calls * 100_000 + rows / 2) / rows
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    /// One page of the window: from `start` to `end`, or the page `token` names.
    func fetch(start: Date, end: Date, token: String?, purpose: CallPurpose) async throws
        -> VoidedPurchasesListResponse
    {
        try await client.listVoidedPurchases(
            packageName: app.storeAppId, startTime: token == nil ? start : nil, endTime: token == nil ? end : nil,
            token: token, maxResults: Self.pageSize, type: .oneTimeProductsAndSubscriptions,
            includeQuantityBasedPartialRefund: true, purpose: purpose)
    }

    static func text(_ date: Date) -> String {
        PostgresTimestamp.millis(date)
    }
}
