import Foundation
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
        /// Whether the window was drained (the checkpoint advanced).
        public var drained = false
        /// A window older than the store keeps, if one was found.
        public var gap: (from: Date, to: Date)?
        /// What the Orders API calls for the amounts did.
        public var orders = GoogleOrderAmounts.Summary()

        public static func == (lhs: Summary, rhs: Summary) -> Bool {
            lhs.pages == rhs.pages && lhs.rows == rhs.rows && lhs.inserted == rhs.inserted
                && lhs.updated == rhs.updated && lhs.drained == rhs.drained && lhs.gap?.from == rhs.gap?.from
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
    let store: VoidedPurchaseStore
    /// Fetches what Google refunded for the rows of each stored page.
    let orderAmounts: GoogleOrderAmounts
    /// The daily cap of voided purchases and the backfills' share of it, for the progress line.
    let quotaCaps: (daily: Int?, backfill: Int?)

    /// Creates the job for one Google app.
    public init(app: AppConfig, configuration: Configuration, client: PlayDeveloperClient) {
        self.app = app
        self.client = client
        planner = VoidedWindowPlanner(
            overlap: TimeInterval(configuration.sync.googleOverlap.seconds),
            skew: TimeInterval(configuration.sync.googleSkew.seconds))
        store = VoidedPurchaseStore(app: app, products: configuration.products)
        orderAmounts = GoogleOrderAmounts(app: app, client: client)
        let policy = configuration.quotaPolicy
        let limit = policy.limit(app: app.id, api: .googleVoidedPurchases)
        quotaCaps = (limit?.dailyCap, policy.backfillCap(of: limit))
    }

    /// Runs the job.
    /// - Throws: `QuotaError` / `PlayAPIError` from the store, `PostgresError`, or `ReconcilerError(.temporary)`
    ///   when stopped by a signal; whatever was committed stays.
    public func run(_ mode: Mode, in environment: JobEnvironment) async throws -> Summary {
        let started = ContinuousClock.now
        let connection = environment.connection
        let job = mode == .incremental ? Self.job : Self.backfillJob
        let purpose: CallPurpose = mode == .incremental ? .incremental : .backfill
        var checkpoint = try SyncCheckpoint.load(job: job, app: app.id, on: connection)
        var summary = Summary()
        let now = environment.now()
        let plan: VoidedWindowPlanner.Plan
        switch mode {
        case .incremental:
            plan = planner.incremental(highWater: checkpoint.highWater, now: now)
        case .backfill(let since, let until):
            plan = planner.backfill(since: since, until: until, now: now)
        }
        var logger = environment.logger
        logger[metadataKey: "job"] = "\(job)"
        // Resume the window in flight when it is the one asked for (a backfill with other bounds starts afresh).
        let resumes: Bool
        switch mode {
        case .incremental: resumes = checkpoint.inFlight
        case .backfill(let since, let until):
            // Only the window of the same request. A bound beyond Google's limits (--since older than 30 days,
            // --until after now) is clamped afresh by every run and so moves: it matches when both runs clamped it.
            let sameStart = checkpoint.windowStart.map { $0 == since || ($0 > since && plan.start > since) } ?? false
            let sameEnd =
                until.map { wanted in
                    checkpoint.windowEnd.map { $0 == wanted || ($0 < wanted && plan.end < wanted) } ?? false
                } ?? true
            resumes = checkpoint.inFlight && sameStart && sameEnd
        }
        var start = plan.start
        var end = plan.end
        var token: String?
        if resumes, let windowStart = checkpoint.windowStart, let windowEnd = checkpoint.windowEnd {
            start = windowStart
            end = windowEnd
            token = checkpoint.pageToken
            logger.info(
                "resuming window \(Self.text(start)) – \(Self.text(end)) after \(checkpoint.pagesDone) stored pages")
        } else {
            checkpoint.windowStart = nil
            checkpoint.windowEnd = nil
            checkpoint.pageToken = nil
            checkpoint.pagesDone = 0
            checkpoint.rowsDone = 0
            if let gap = plan.gap {
                summary.gap = gap
                logger.error(
                    "gap: voids recorded \(Self.text(gap.from)) – \(Self.text(gap.to)) are older than Google keeps (30 days) and cannot be fetched any more"
                )
                if !environment.dryRun {
                    try SyncGap.record(job: job, app: app.id, from: gap.from, to: gap.to, on: connection)
                }
            }
            logger.info("window \(Self.text(start)) – \(Self.text(end))")
        }
        var restartedAfterTokenError = false
        // After a page of only new rows the next is most likely new too (see VoidedPurchaseStore.upsert).
        var expectNew = false
        // The next page's call, started while the page in hand is stored (why: where it is started, below).
        var prefetched: Task<VoidedPurchasesListResponse, any Error>?
        defer { prefetched?.cancel() }
        while true {
            // A stop request lets the call already travelling finish and its page be saved (the quota is spent).
            if prefetched == nil { try environment.checkShutdown() }
            let page: VoidedPurchasesListResponse
            do {
                if let call = prefetched {
                    prefetched = nil
                    page = try await call.value
                } else {
                    page = try await fetch(start: start, end: end, token: token, purpose: purpose)
                }
            } catch let error as PlayAPIError
                where token != nil && error.code == .badRequest && !restartedAfterTokenError
            {
                // An expired or unknown page token: the window is re-read from its start. Upserts make that safe;
                // it costs the pages already read.
                logger.warning(
                    "the page token was refused (\(error.code.rawValue)); restarting the window from its start")
                restartedAfterTokenError = true
                token = nil
                environment.counters.add("token_restarts")
                // A window resumed days after it was planned may start before what Google still keeps, and Google
                // refuses such a startTime: every rerun would fail the same way. Start at the oldest time it keeps
                // and record the part before as a gap.
                let oldest = VoidedWindowPlanner.oldestStart(now: environment.now())
                if start < oldest {
                    summary.gap = (from: start, to: oldest)
                    logger.error(
                        "gap: voids recorded \(Self.text(start)) – \(Self.text(oldest)) are older than Google keeps (30 days) and cannot be fetched any more"
                    )
                    if !environment.dryRun {
                        try SyncGap.record(job: job, app: app.id, from: start, to: oldest, on: connection)
                    }
                    start = oldest
                    end = max(end, oldest)
                }
                continue
            }
            summary.pages += 1
            summary.rows += page.voidedPurchases.count
            environment.counters.add("pages")
            environment.counters.add("rows_fetched", page.voidedPurchases.count)
            let rows = storable(page.voidedPurchases, page: summary.pages, logger: logger, in: environment)
            let next = page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }
            if let next, !environment.shutdown.isRequested {
                // Pages can only be read in order, but the next one can travel (quota, HTTP, decoding) while this
                // one is stored: the store and the database work at once. It is used only after this page and its
                // checkpoint have committed, so a crash loses nothing but costs at most two calls (this page and
                // that one); its errors (quota, an outage, a refused token) surface when it is taken, as if it were
                // asked for then.
                let (from, to) = (start, end)
                prefetched = Task { [self] in try await fetch(start: from, end: to, token: next, purpose: purpose) }
            }
            if environment.dryRun {
                let fresh = try store.countNew(rows, on: connection)
                summary.inserted += fresh
                environment.counters.add("would_insert", fresh)
            } else {
                if next != nil {
                    checkpoint.windowStart = start
                    checkpoint.windowEnd = end
                    checkpoint.pageToken = next
                    checkpoint.pagesDone += 1
                    checkpoint.rowsDone += Int64(rows.count)
                } else {
                    checkpoint.highWater = max(end, checkpoint.highWater ?? end)
                    checkpoint.windowStart = nil
                    checkpoint.windowEnd = nil
                    checkpoint.pageToken = nil
                    checkpoint.pagesDone = 0
                    checkpoint.rowsDone = 0
                }
                let counts = try connection.transaction { connection in
                    let counts = try store.upsert(
                        rows, runId: environment.runId, expectNew: expectNew, on: connection)
                    try checkpoint.save(on: connection)
                    return counts
                }
                expectNew = counts.0 == rows.count
                summary.inserted += counts.0
                summary.updated += counts.1
                environment.counters.add("inserted", counts.0)
                environment.counters.add("updated", counts.1)
                // The amounts of the page's refunds (its own transactions; a failure leaves them for a later run).
                if !summary.orders.stopped {
                    summary.orders.add(
                        try await orderAmounts.fetch(
                            orderIds: rows.compactMap(\.orderId), purpose: purpose, in: environment))
                }
            }
            showProgress(
                summary, last: rows.last, job: job, start: start, end: end, elapsed: started.duration(to: .now),
                purpose: purpose, in: environment)
            token = next
            if next == nil { break }
        }
        if !environment.dryRun, !summary.orders.stopped {
            // Refunds still without the store's amount from earlier runs (pending at Google, or not fetched).
            let backlog = try orderAmounts.backlog(limit: Self.orderBacklogPerRun, on: connection)
            summary.orders.add(try await orderAmounts.fetch(orderIds: backlog, purpose: purpose, in: environment))
        }
        if !environment.dryRun, !summary.orders.stopped, mode == .incremental {
            // Refunds Google made without revoking never reach the voided list: re-read known orders for them.
            summary.orders.add(
                try await orderAmounts.recheckKnownOrders(
                    limit: Self.knownOrdersPerRun, purpose: purpose, in: environment))
        }
        environment.progress?.finish()
        summary.drained = true
        if summary.orders.calls > 0 {
            logger.info(
                "amounts: \(summary.orders.calls) Orders API calls for \(summary.rows) voided rows (\(Self.perThousand(summary.orders.calls, summary.rows)) per 1000), \(summary.orders.priced) refunds priced by the store, \(summary.orders.pending) pending, \(summary.orders.notFound) orders not found"
            )
        }
        logger.info(
            "\(environment.dryRun ? "dry run: " : "")\(summary.pages) pages, \(summary.rows) rows, \(summary.inserted) \(environment.dryRun ? "would be new" : "new"), \(summary.updated) updated; checkpoint \(environment.dryRun ? "unchanged" : "at \(Self.text(end))")"
        )
        let rejected = environment.counters["rows_rejected"]
        if rejected > 0 {
            throw ReconcilerError(
                .failed,
                "\(rejected) voided purchases could not be stored (see the lines above); everything else was saved")
        }
        return summary
    }

    /// Order ids of earlier refunds re-asked per run (pending at Google, or not fetched yet).
    static let orderBacklogPerRun = 10_000
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

    /// The rows PostgreSQL can store; each other one is logged with its reason and counted as `rows_rejected`.
    func storable(_ rows: [VoidedPurchase], page: Int, logger: Logger, in environment: JobEnvironment)
        -> [VoidedPurchase]
    {
        rows.enumerated().compactMap { index, row in
            guard let reason = VoidedPurchaseStore.unstorableReason(row) else { return row }
            environment.counters.add("rows_rejected")
            logger.error(
                "voided purchase rejected, not stored: page \(page) row \(index + 1) (orderId \(VoidedPurchaseStore.quoted(row.orderId))): \(reason)"
            )
            return nil
        }
    }

    static func text(_ date: Date) -> String {
        String(PostgresTimestamp.format(date).prefix(19)) + "Z"
    }
}
