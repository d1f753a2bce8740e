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
/// Each order is asked at most once per run: up to 1000 ids per `orders.batchget` call; when Google refuses a batch
/// with 404 (an id it does not know) each order of it is asked alone with `orders.get`. A dry run reads no orders.
struct GoogleReviewOrders: Sendable {
    /// Ids per call (Google's limit for `orders.batchget`).
    static let batch = PlayDeveloperClient.maxOrderIds
    /// Batches per run and step at most.
    static let maxBatches = 5

    let app: AppConfig
    let play: PlayDeveloperClient
    let requests: RefundRequestStore

    /// Describes the open requests whose order was never read. Returns how many were described.
    @discardableResult
    func describeOpen(in environment: JobEnvironment) async throws -> Int {
        guard !environment.dryRun else { return 0 }
        var described = 0
        for _ in 0..<Self.maxBatches {
            try environment.checkShutdown()
            let due = try requests.ordersToDescribe(
                limit: Self.batch, now: environment.now(), on: environment.connection)
            guard !due.isEmpty, let orders = try await read(due, in: environment) else { break }
            try environment.connection.transaction { connection in
                for item in due { try requests.describe(id: item.id, with: orders[item.orderId], on: connection) }
            }
            described += due.count
            if due.count < Self.batch { break }
        }
        environment.counters.add("orders_described", described)
        return described
    }

    /// Decides the requests whose review is over (the ledger first, then the orders still undecided). An order
    /// Google does not know leaves its request undecided (logged).
    func decideEnded(in environment: JobEnvironment) async throws {
        guard !environment.dryRun else { return }
        let now = environment.now()
        let due = try requests.reviewsEnded(reviewEndedBy: now, limit: Self.batch, on: environment.connection)
        guard !due.isEmpty, let orders = try await read(due, in: environment) else { return }
        try environment.connection.transaction { connection in
            for item in due {
                guard let order = orders[item.orderId] else {
                    environment.logger.warning(
                        "order \(item.orderId): Google does not know it; the outcome of its review stays unknown")
                    continue
                }
                let decision = order.decision(reviewEnd: GoogleReviewPeriod.end(deadline: item.deadline))
                try requests.describe(id: item.id, with: order, on: connection)
                try requests.decide(id: item.id, decision, at: now, on: connection)
                environment.counters.add("outcomes_\(decision.rawValue)")
            }
        }
    }

    /// The orders of `due` by id, each asked once; `nil` when the service account may not read orders (logged).
    func read(_ due: [GoogleOrderToRead], in environment: JobEnvironment) async throws -> [String: GoogleReviewOrder]? {
        let ids = Array(Set(due.map(\.orderId))).sorted()
        let packageName = app.packageName ?? ""
        var found: [String: GoogleReviewOrder] = [:]
        do {
            do {
                let answer = try await play.batchGetOrdersAnswer(
                    packageName: packageName, orderIds: ids, purpose: .incremental)
                for order in answer.orders { found[order.orderId] = GoogleReviewOrder(order) }
            } catch let error as PlayAPIError where error.code == .notFound && ids.count > 1 {
                for id in ids {
                    try environment.checkShutdown()
                    do {
                        let order = try await play.getOrder(
                            packageName: packageName, orderId: id, purpose: .incremental)
                        found[id] = GoogleReviewOrder(order)
                    } catch let error as PlayAPIError where error.code == .notFound {
                        continue
                    }
                }
            }
        } catch let error as PlayAPIError where error.code == .notFound {
            return [:]
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
}
