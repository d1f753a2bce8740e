import Foundation
import Ledger
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// Pricing while the run goes on.
///
/// At a real store's answer time (a second or more) an Orders call awaited after each voided page halved the pace of
/// the voided paging: its slices sat idle while the quota gate would have let them call. So the Orders calls travel
/// on their own: ids of stored refunds queue up, whole calls of 1000 distinct ids leave as soon as 1000 are queued
/// (a partial one when the caller flushes), a few at once, and each answer is stored when it comes, on the caller's
/// connection, between two pages. One connection means the page writes and the amounts never hold row locks against
/// each other, and a page's rows are always committed before their order is asked.
extension GoogleOrderAmounts {
    /// One `orders.batchget` answer, with the ids it asked for.
    struct OrdersAnswer: Sendable {
        var ids: [String]
        /// The orders, made ready to store.
        var result: Result<GoogleOrderStore.Answered, any Error>

        /// The quota gate refused the call because the run is stopping (no store call after a signal).
        var refusedByStop: Bool {
            guard case .failure(let error) = result else { return false }
            return (error as? ReconcilerError) == StoppableQuotaGate.stopped
        }
    }

    /// Asks Google for these orders (through the quota gate); never throws, the answer carries the error. The
    /// answer is decoded, split into its orders' texts and made ready to store here, beside the paging, not in the
    /// loop that stores.
    /// - Parameter rendered: the answer is made ready to store whole (a page priced ahead stores it in parts).
    func call(_ ids: [String], purpose: CallPurpose, rendered: Bool = true) async -> OrdersAnswer {
        do {
            let answer = try await client.batchGetOrdersAnswer(
                packageName: app.storeAppId, orderIds: ids, purpose: purpose)
            let payloads = PlayDeveloperClient.orderTexts(in: answer.body, orders: answer.orders)
            return OrdersAnswer(
                ids: ids,
                result: .success(GoogleOrderStore.Answered(answer.orders, payloads: payloads, rendered: rendered)))
        } catch {
            return OrdersAnswer(ids: ids, result: .failure(error))
        }
    }

    /// The Orders calls of one run after their pages are stored, with no I/O: the ids queued, the calls in flight,
    /// and what the answers did. Its owner makes the calls it names (``nextCalls(flush:)``) and stores their answers
    /// (``GoogleOrderAmounts/apply(_:in:)``), then hands back what storing did (``stored(_:outcome:)``).
    struct OrdersQueue: Sendable {
        /// Orders calls in flight at once: enough that a burst of voided pages (30 at once, then one a second) is
        /// priced while the next burst is paged, so the run ends soon after its last page (the
        /// figures are in docs/performance.md). The "Orders" bucket (2940 a minute left to orders) is far from it.
        static let maxInFlight = 8

        /// What the answers did so far.
        private(set) var summary = Summary()
        /// Calls launched and not yet answered.
        private(set) var inFlight = 0
        /// Ids waiting for a call, in the order they came.
        private var queued: [String] = []
        /// Halves of a call answered with a whole-call 404, each asked alone, before anything queued.
        private var halves: [[String]] = []
        /// Ids queued or in flight: a repeat in a later page is not asked twice at once.
        private var waiting: Set<String> = []
        /// Whether a call was answered with orders yet.
        private var answered = false
        /// Whether a stop request gave up what was left to ask (an answer refused at the gate among it).
        private(set) var dropped = false

        /// A call was answered with orders and the asking has not stopped: a voided page's orders may be asked
        /// before it is stored (see ``GoogleIntakeMachine``).
        var mayAskAhead: Bool { answered && !summary.stopped && !dropped }

        /// Counts what an Orders call made for a page not yet stored did.
        mutating func noteAhead(_ outcome: Summary) {
            summary.add(outcome)
        }

        /// Every id queued was asked and answered, and the asking never stopped: the backlog's mark may move.
        var isComplete: Bool { !summary.stopped && !dropped && isIdle }

        /// Nothing in flight and nothing left that may still be asked.
        var isIdle: Bool { inFlight == 0 && (summary.stopped || (queued.isEmpty && halves.isEmpty)) }

        /// Queues ids as they are (already selected by the caller).
        mutating func queue(_ ids: [String]) {
            for id in ids where waiting.insert(id).inserted { queued.append(id) }
        }

        /// The calls to make now, while fewer than ``maxInFlight`` travel: halves first, then whole calls of 1000
        /// ids, and with `flush` a last partial one. Each is counted in flight until ``stored(_:outcome:)``.
        mutating func nextCalls(flush: Bool) -> [[String]] {
            var calls: [[String]] = []
            // Until a call has been answered with orders, one at a time: a missing permission or a spent budget
            // then costs one refused call, not one per call in flight.
            while !summary.stopped, inFlight < (answered ? Self.maxInFlight : 1) {
                let ids: [String]
                if !halves.isEmpty {
                    ids = halves.removeFirst()
                } else if queued.count >= PlayDeveloperClient.maxOrderIds || (flush && !queued.isEmpty) {
                    ids = Array(queued.prefix(PlayDeveloperClient.maxOrderIds))
                    queued.removeFirst(ids.count)
                } else {
                    break
                }
                inFlight += 1
                summary.calls += 1
                calls.append(ids)
            }
            return calls
        }

        /// An answer was stored, doing `outcome`: a store's refusal stops the asking for this run (what was not
        /// asked waits for the next run's backlog); a whole-call 404 is asked again in halves.
        mutating func stored(_ answer: OrdersAnswer, outcome: Outcome) {
            inFlight -= 1
            if case .success = answer.result { answered = true }
            summary.add(outcome.summary)
            if let split = outcome.split {
                halves += split
            } else {
                waiting.subtract(answer.ids)
            }
        }

        /// An answer refused at the gate by a stop request: what is queued is given up.
        mutating func refusedByStop() {
            inFlight -= 1
            dropQueued()
        }

        /// Gives up what is queued (a stop request): it waits for the next run's backlog.
        mutating func dropQueued() {
            dropped = true
            waiting.subtract(queued)
            waiting.subtract(halves.joined())
            queued.removeAll()
            halves.removeAll()
        }
    }

    /// What storing one answer did, and the two halves to ask apart after a whole-call 404.
    struct Outcome {
        var summary = Summary()
        var split: [[String]]?
    }

    /// Stores one answer: the orders and their refunds' amounts; a lone unknown id marked `not_found`; a 403 marked
    /// `no_permission` and the asking stopped; throttling, the daily budget or another store error stops the asking.
    /// The caller counts the call (`orders_calls`) when its answer comes.
    func apply(_ answer: OrdersAnswer, in environment: JobEnvironment) throws -> Outcome {
        var outcome = Outcome()
        let (ids, logger) = (answer.ids, environment.logger)
        do {
            let answered = try answer.result.get()
            outcome.summary.orders += answered.orders.count
            environment.counters.add("orders_fetched", answered.orders.count)
            let stored = try orders.store(
                answered, runId: environment.runId, logger: logger, on: environment.connection)
            outcome.summary.priced += stored.priced
            outcome.summary.pending += stored.pending
            environment.counters.add("orders_over_refunded", stored.overRefunded)
        } catch let error as PlayAPIError where error.code == .notFound {
            guard ids.count > 1 else {
                logger.warning(
                    "order \(LedgerLimits.quoted(ids[0])) not found by the Orders API; its refund keeps no store amount"
                )
                try orders.mark(ids, status: .notFound, on: environment.connection)
                environment.counters.add("orders_not_found")
                outcome.summary.notFound += 1
                return outcome
            }
            outcome.split = [Array(ids[..<(ids.count / 2)]), Array(ids[(ids.count / 2)...])]
        } catch let error as PlayAPIError where error.code == .permissionDenied {
            logger.warning(
                "the Orders API refused (\(error.code.rawValue)): the service account lacks 'View financial data'; Google refunds keep configured (estimated) or unknown amounts"
            )
            try orders.mark(ids, status: .noPermission, on: environment.connection)
            environment.counters.add("orders_permission_denied")
            outcome.summary.stopped = true
        } catch let error as QuotaError {
            logger.warning("Orders API: \(error); the remaining amounts are fetched on the next run")
            outcome.summary.stopped = true
        } catch let error as PlayAPIError {
            logger.warning(
                "Orders API: \(error.code.rawValue) (\(error)); the remaining amounts are fetched on the next run")
            outcome.summary.stopped = true
        }
        return outcome
    }

    /// Asks for everything `queue` holds, ``OrdersQueue/maxInFlight`` calls at once, storing each answer as it comes,
    /// until nothing is left (or the asking stopped), and returns the queue then. A stop request lets the calls in
    /// flight land and asks no more.
    func drain(_ start: OrdersQueue, purpose: CallPurpose, in environment: JobEnvironment) async throws
        -> OrdersQueue
    {
        var queue = start
        try await withThrowingTaskGroup(of: OrdersAnswer.self) { group in
            func launch() {
                if environment.shutdown.isRequested { queue.dropQueued() }
                for ids in queue.nextCalls(flush: true) { group.addTask { await call(ids, purpose: purpose) } }
            }
            launch()
            while !queue.isIdle, let answer = try await group.next() {
                environment.counters.add("orders_calls")
                queue.stored(answer, outcome: try apply(answer, in: environment))
                launch()
            }
        }
        return queue
    }
}
