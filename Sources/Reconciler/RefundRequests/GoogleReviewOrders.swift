import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// The orders behind a Google app's refund reviews, read through the shared gate: before a review is decided, its
/// product, country, subscription period and price (from `google_order` when the ledger has the order, else
/// `orders.batchget`), so that the rules' `products` and `countries` work; once its review is over, Google's
/// decision (``GoogleReviewPeriod``): `refunded` when the ledger has the order voided or the order says so, else
/// `declined`.
///
/// Orders are read in batches of up to 1000 ids per `orders.batchget` call; when Google refuses a batch with 404 (an
/// id it does not know) the batch is asked again in halves, down to single orders asked with `orders.get`. A dry run
/// reads no orders.
struct GoogleReviewOrders: Sendable {
    /// Ids per call (Google's limit for `orders.batchget`).
    static let batch = PlayDeveloperClient.maxOrderIds
    /// Batches per run and step at most.
    static let maxBatches = 5

    let app: AppConfig
    let play: PlayDeveloperClient
    let requests: RefundRequestStore

    /// Describes the open requests whose order was never read: from `google_order` when the ledger has the order,
    /// else from Google, with each subscription renewal's first order (the customer's first purchase: the rules'
    /// `tenureDaysAtLeast`). Returns how many were described.
    @discardableResult
    func describeOpen(in environment: JobEnvironment) async throws -> Int {
        guard !environment.dryRun else { return 0 }
        var described = 0
        for _ in 0..<Self.maxBatches {
            try environment.checkShutdown()
            let due = try requests.ordersToDescribe(
                limit: Self.batch, now: environment.now(), on: environment.connection)
            guard !due.isEmpty, let orders = try await orders(of: due.map(\.orderId), in: environment) else { break }
            try requests.describe(due.map { ($0.id, orders[$0.orderId]) }, on: environment.connection)
            described += due.count
            if due.count < Self.batch { break }
        }
        environment.counters.add("orders_described", described)
        return described
    }

    /// The orders `orderIds`, each subscription renewal with its first purchase: the orders and the renewals' first
    /// orders from `google_order` when the ledger has them, the rest from Google, in one `orders.batchget` for up to
    /// ``batch``. `nil` when some of `orderIds` are to be read and the service account may not read orders.
    func orders(of orderIds: [String], in environment: JobEnvironment) async throws -> [String: GoogleReviewOrder]? {
        let wanted = Set(orderIds).union(orderIds.compactMap(GoogleReviewOrder.firstOrderId(of:)))
        var orders = try requests.storedOrders(Array(wanted), on: environment.connection)
        let missing = wanted.subtracting(orders.keys)
        if !missing.isEmpty {
            if let read = try await read(Array(missing), in: environment) {
                orders.merge(read) { stored, _ in stored }
            } else if !Set(orderIds).isSubset(of: orders.keys) {
                return nil
            }
        }
        for id in orderIds {
            guard let first = orders[id]?.firstOrderId else { continue }
            let firstPurchase = orders[first]?.firstPurchasedAt
            orders[id]?.firstPurchasedAt = firstPurchase
        }
        return orders
    }

    /// Decides the requests whose review is over (the ledger first, then the orders still undecided). An order
    /// Google does not know leaves its request undecided (logged).
    func decideEnded(in environment: JobEnvironment) async throws {
        guard !environment.dryRun else { return }
        let now = environment.now()
        let due = try requests.reviewsEnded(reviewEndedBy: now, limit: Self.batch, on: environment.connection)
        guard !due.isEmpty, let orders = try await read(due.map(\.orderId), in: environment) else { return }
        var described: [(id: Int64, order: GoogleReviewOrder?)] = []
        var decisions: [(id: Int64, decision: RefundRequestDecision)] = []
        var unknown: [Int64] = []
        for item in due {
            guard let order = orders[item.orderId] else {
                environment.logger.warning(
                    "order \(item.orderId): Google does not know it; the outcome of its review stays unknown (asked again in a day)"
                )
                unknown.append(item.id)
                continue
            }
            let decision = order.decision(
                reviewEnd: GoogleReviewPeriod.end(deadline: item.deadline),
                since: item.deadline.addingTimeInterval(-RequestingStore.google.answerWindow),
                askedAgainAt: item.askedAgainAt)
            described.append((item.id, order))
            decisions.append((item.id, decision))
            environment.counters.add("outcomes_\(decision.rawValue)")
        }
        try environment.connection.transaction { connection in
            try requests.describe(described, on: connection)
            try requests.decide(decisions, at: now, on: connection)
            try requests.unknownOrders(unknown, at: now, on: connection)
        }
    }

    /// The orders `orderIds` read from Google, by id (those Google does not know left out), up to ``batch`` a call;
    /// `nil` when the service account may not read orders (logged).
    func read(_ orderIds: [String], in environment: JobEnvironment) async throws -> [String: GoogleReviewOrder]? {
        let ids = Array(Set(orderIds)).sorted()
        let (play, packageName) = (play, app.packageName ?? "")
        var found: [String: GoogleReviewOrder] = [:]
        do {
            var orders: [(String, GoogleReviewOrder)] = []
            for start in stride(from: 0, to: ids.count, by: Self.batch) {
                orders += try await Self.readSplitting(
                    ids[start..<min(ids.count, start + Self.batch)],
                    batch: { ids in
                        try environment.checkShutdown()
                        return try await Self.unlessUnreadable {
                            try await play.batchGetOrdersAnswer(
                                packageName: packageName, orderIds: ids, purpose: .incremental
                            ).orders.map { ($0.orderId, GoogleReviewOrder($0)) }
                        }
                    },
                    single: { id in
                        try environment.checkShutdown()
                        return try await Self.unlessUnreadable(
                            onUnreadable: { error in
                                guard error.code != .notFound else { return }
                                environment.logger.warning(
                                    "order \(id) cannot be read (\(error)): its review is decided without it")
                            }
                        ) {
                            let order = try await play.getOrder(
                                packageName: packageName, orderId: id, purpose: .incremental)
                            return (id, GoogleReviewOrder(order))
                        }
                    })
            }
            for (id, order) in orders { found[id] = order }
        } catch let error as PlayAPIError where error.code == .permissionDenied {
            environment.logger.warning(
                """
                the service account may not read orders ("View financial data"): the product, country and \
                outcome of Google's refund reviews stay unknown
                """)
            return nil
        }
        environment.counters.add("orders_read", found.count)
        return found
    }

    /// Reads `ids` with `batch`; Google refuses a whole `orders.batchget` with 404 (`batch` answers nil) when it
    /// does not know one of its ids, so a refused batch is split in halves and each asked again, down to single ids
    /// asked with `single` (`orders.get`; nil: unknown, left out). k unknown ids among n cost about
    /// 2k log2(n / k) calls, not n.
    static func readSplitting<Found>(
        _ ids: ArraySlice<String>, batch: ([String]) async throws -> [Found]?,
        single: (String) async throws -> Found?
    ) async throws -> [Found] {
        if ids.count == 1, let id = ids.first { return try await single(id).map { [$0] } ?? [] }
        guard !ids.isEmpty else { return [] }
        if let found = try await batch(Array(ids)) { return found }
        let middle = ids.startIndex + ids.count / 2
        let first = try await readSplitting(ids[..<middle], batch: batch, single: single)
        return first + (try await readSplitting(ids[middle...], batch: batch, single: single))
    }

    /// `body`'s answer, or nil when Google cannot give the order: it does not know it (404), it is gone (410), it
    /// refuses the id (400) or its answer does not decode (one order's odd figures). A batch answered so is read in
    /// halves to find the order; an order alone is described as unknown, and its review decided with what else is
    /// known, so that one order never keeps every review of the app from its answer. Any other error (quota, 5xx,
    /// transport) is the run's.
    static func unlessUnreadable<T>(
        onUnreadable: (PlayAPIError) -> Void = { _ in }, _ body: () async throws -> T
    ) async throws -> T? {
        do {
            return try await body()
        } catch let error as PlayAPIError where unreadable.contains(error.code) {
            onUnreadable(error)
            return nil
        }
    }

    /// The answers that say an order cannot be read, rather than that Google cannot be asked now.
    static let unreadable: Set<PlayAPIError.Code> = [
        .notFound, .gone, .badRequest, .invalidArgument, .malformedResponse,
    ]
}
