import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// What Google refunded, from the Orders API: once a voided page is stored, the orders of its rows queue up and are
/// read with `orders.batchget` (distinct ids, 1000 a call, a few calls at once, while the paging goes on: see
/// `GoogleOrderAmounts+Pricing.swift`); the ledger (``GoogleOrderStore``) stores each order and prices its refunds
/// (``GoogleOrderPricing``).
///
/// - A whole-call 404 (one id unknown or of another package) is split in halves and retried until the unknown id
///   is alone; it is recorded `not_found` and the others land. One bad id among 1000 costs about 20 calls.
/// - 403 (no "View financial data" permission): recorded `no_permission`, no more order calls this run; amounts
///   stay estimated (configured prices in the sale's currency) or unknown.
/// - The quota gate's daily budget (`limits.<app>.developerApiPerDay`) or the store's throttling stops the fetching
///   for this run; what was not fetched is asked on the next run (``GoogleOrderStore/backlog(limit:since:fetchedBefore:on:)``).
/// - A refund still pending at Google (a partial refund `PENDING`, the order `PENDING_REFUND`) is stored with note
///   `pending` and asked again on later runs until settled.
public struct GoogleOrderAmounts: Sendable {
    /// What a call of ``fetch(orderIds:purpose:in:)`` did.
    public struct Summary: Sendable, Equatable {
        /// `orders.batchget` calls made.
        public var calls = 0
        /// Orders read.
        public var orders = 0
        /// Order ids Google does not know (or of another package).
        public var notFound = 0
        /// Refund rows that got a store amount.
        public var priced = 0
        /// Refunds still pending at Google.
        public var pending = 0
        /// Fetching stopped for this run (quota, permission, outage); the rest waits for the next run.
        public var stopped = false

        mutating func add(_ other: Summary) {
            calls += other.calls
            orders += other.orders
            notFound += other.notFound
            priced += other.priced
            pending += other.pending
            stopped = stopped || other.stopped
        }
    }

    let app: AppConfig
    let client: PlayDeveloperClient
    /// The ledger's order store of the app: every statement on `google_order` and the refunds' amounts.
    let orders: GoogleOrderStore

    /// Creates the fetcher for one Google app.
    public init(app: AppConfig, client: PlayDeveloperClient, prices: ConfiguredPrices) {
        self.app = app
        self.client = client
        orders = GoogleOrderStore(appId: app.id, prices: prices)
    }

    /// The job name of `storerecon backfill google-orders` (its lock and run records).
    public static let backfillJob = "google_orders_backfill"

    /// `storerecon backfill google-orders`: asks for every refund in the ledger still without the store's amount
    /// (refunded since `since`), 1000 orders a call, oldest first, each order once per run, with a progress line.
    /// Orders refused for want of the financial permission are asked at once (the operator runs it after granting
    /// the permission). Resumable: every call's orders commit as they come.
    public func backfill(since: Date?, in environment: JobEnvironment) async throws -> Summary {
        let (asked, queue) = try await priceBacklog(
            since: since, refusedToo: true, queue: OrdersQueue(), purpose: .backfill, in: environment)
        environment.progress?.finish()
        let summary = queue.summary
        environment.logger.info(
            "backfill google-orders: \(asked) orders asked in \(summary.calls) calls; \(summary.priced) refunds priced by the store, \(summary.pending) pending, \(summary.notFound) orders not found"
        )
        return summary
    }

    /// Asks for the whole backlog (``GoogleOrderStore/backlog(limit:since:fetchedBefore:refusedToo:mark:on:)``) in
    /// rounds, each order once, until it is empty or the asking stopped; returns how many orders were asked. A run
    /// that stored pages and was killed before their orders were asked leaves them all here, so the next run prices
    /// them all, not a share. With a sync's `mark`, only what can wait since the mark is looked at, and the mark
    /// moves to the sync's start once everything was asked (nothing stopped or given up this run).
    func priceBacklog(
        since: Date?, fetchedBefore: Date? = nil, refusedToo: Bool = false, mark: GoogleOrderStore.BacklogMark? = nil,
        queue start: OrdersQueue, purpose: CallPurpose, in environment: JobEnvironment
    ) async throws -> (asked: Int, queue: OrdersQueue) {
        var queue = start
        var asked = Set<String>()
        while !queue.summary.stopped {
            try environment.checkShutdown()
            let ids = try orders.backlog(
                limit: Self.backfillRound + asked.count, since: since, fetchedBefore: fetchedBefore,
                refusedToo: refusedToo, mark: mark, on: environment.connection
            ).filter { !asked.contains($0) }
            guard !ids.isEmpty else {
                if let mark, queue.isComplete { try orders.closeBacklog(mark, on: environment.connection) }
                break
            }
            let round = Array(ids.prefix(Self.backfillRound))
            asked.formUnion(round)
            queue.queue(round)
            queue = try await drain(queue, purpose: purpose, in: environment)
            let summary = queue.summary
            environment.progress?.update(
                "google-orders \(app.id): \(asked.count) orders asked, \(summary.calls) calls, \(summary.priced) refunds priced, \(summary.pending) pending, \(summary.notFound) not found"
            )
        }
        return (asked.count, queue)
    }

    /// Orders a backfill round asks for (calls of 1000, ``OrdersQueue/maxInFlight`` at once).
    static let backfillRound = OrdersQueue.maxInFlight * PlayDeveloperClient.maxOrderIds

    /// Fetches and stores the orders of these ids that need it (see ``GoogleOrderStore/settleVoided(_:on:)``), 1000 a call, a few calls
    /// at once. Never throws for a store answer: the voided page it follows is already stored, and what is not
    /// fetched now is asked on a later run. Throws only for the database (and a stop request).
    public func fetch(orderIds: [String], purpose: CallPurpose, in environment: JobEnvironment) async throws
        -> Summary
    {
        var queue = OrdersQueue()
        if !orderIds.isEmpty {
            queue.queue(try orders.settleVoided(Array(Set(orderIds)), on: environment.connection))
        }
        return try await drain(queue, purpose: purpose, in: environment).summary
    }

    /// Re-reads up to `limit` orders storerecon knows (``GoogleOrderStore/knownOrders(limit:on:)``) for refunds
    /// Google made without revoking them, within the same quota as every Orders call (the night's `google_orders`
    /// job, after the recheck has learned the subscriptions' current orders).
    public func readKnownOrders(limit: Int, purpose: CallPurpose, in environment: JobEnvironment) async throws
        -> Summary
    {
        var queue = OrdersQueue()
        queue.queue(try orders.knownOrders(limit: limit, on: environment.connection))
        return try await drain(queue, purpose: purpose, in: environment).summary
    }
}
