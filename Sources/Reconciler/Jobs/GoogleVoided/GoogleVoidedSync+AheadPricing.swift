import Foundation
import Ledger
import PlayDeveloperAPI
import RateLimiting

/// Asking for a voided page's orders before the page is stored, so that its refunds are written once, with their
/// amounts (see `GoogleOrderStore+Ahead.swift` for what the ledger does with the answer).
///
/// When a page comes, the orders on it that the ledger does not know are asked at once, in one `orders.batchget`
/// (a page holds at most 1000 rows), and the page waits in that call's task. The ``PagerStateMachine`` moves its
/// slice on at once (the slice's next page leaves when its quota grant comes, whatever this pricing) and holds the
/// page; when the answer is in, the page is stored with the amounts and the orders in one transaction, after the
/// pages of its slice answered before it (a slice's row and the checkpoint never pass a page not stored). Orders the ledger knows, and everything when the asking cannot go
/// ahead, take the usual way: the page is stored, then its orders are queued for the pricing.
///
/// - Only once a call of the run was answered with orders (a missing permission or a spent budget costs one call),
///   and never after a call was refused: one refusal ends the asking ahead for the run, and the page that met it is
///   stored and priced the usual way (whose own call meets the refusal and records it). A call failed by an id
///   Google does not know (404) sends only its page the usual way, which finds that id.
/// - An order on two pages waiting at once is priced with neither: neither page alone holds all its parts, so both
///   take the usual way for it, where the order is priced from every row the ledger holds.
extension GoogleVoidedSync {
    /// The pages waiting for their orders, and what the asking ahead has come to.
    struct AheadState {
        /// Order ids asked for a page that waits, with how many waiting pages asked each.
        var waiting: [String: Int] = [:]
        /// Waiting orders another page came with since: priced the usual way.
        var shared: Set<String> = []
        /// A call was refused: no more asking ahead this run.
        var refused = false
        /// The orders the page being stored got with it (not queued again for the pricing).
        var asked: Set<String> = []
    }

    /// A voided page that waited for its orders: priced when the call succeeded, else as it came with the error.
    struct AheadAnswer: Sendable {
        var page: Answer
        /// The page's number, under which the ``PagerStateMachine`` holds it.
        var number: Int
        var ids: [String]
        var priced: GoogleOrderStore.PricedAhead?
        var error: (any Error)?
    }
}

extension GoogleVoidedSync.Pager {
    /// Whether a page's orders may be asked before it is stored.
    func mayAskAhead(_ pricing: GoogleOrderAmounts.Pricing) -> Bool {
        !environment.dryRun && !ahead.refused && pricing.mayAskAhead
    }

    /// The answered page's orders to ask before it is stored: those the ledger does not know and no waiting page
    /// asked (an order on two waiting pages goes the usual way from both); none when the page goes as it is.
    mutating func orderIdsAhead(_ answer: GoogleVoidedSync.Answer, pricing: GoogleOrderAmounts.Pricing) throws
        -> [String]
    {
        guard mayAskAhead(pricing), !environment.shutdown.isRequested, case .success = answer.result else {
            return []
        }
        let ids = Set(answer.intake.records.filter(\.revokes).map(\.orderId))
        let shared = ids.filter { ahead.waiting[$0] != nil }
        ahead.shared.formUnion(shared)
        let unknown = ids.subtracting(shared)
        let fresh = unknown.subtracting(try sync.orderAmounts.orders.known(Array(unknown), on: environment.connection))
        return fresh.sorted()
    }

    /// Asks for `asked`, the orders of the page held as `number`, in a child task that returns the page priced.
    mutating func askAhead(
        _ asked: [String], for answer: GoogleVoidedSync.Answer, number: Int,
        group: inout ThrowingTaskGroup<GoogleVoidedSync.Event, any Error>
    ) {
        for id in asked { ahead.waiting[id, default: 0] += 1 }
        let (amounts, ledger, purpose, runId) = (sync.orderAmounts, sync.ledger, window.purpose, environment.runId)
        group.addTask {
            let orders = await amounts.call(asked, purpose: purpose, rendered: false)
            var page = answer
            switch orders.result {
            case .success(let answered):
                let priced = GoogleOrderStore.priceAhead(page.intake.records, answered: answered)
                page.intake.records = priced.records
                page.prepared = ledger.prepare(priced.records, runId: runId)
                return .ahead(GoogleVoidedSync.AheadAnswer(page: page, number: number, ids: asked, priced: priced))
            case .failure(let error):
                return .ahead(GoogleVoidedSync.AheadAnswer(page: page, number: number, ids: asked, error: error))
            }
        }
    }

    /// The page of an answered call ahead, ready to hand to the machine: orders another page came with meanwhile
    /// go back to the usual way; a refused call ends the asking ahead and the page goes as it came.
    mutating func received(_ answer: GoogleVoidedSync.AheadAnswer, pricing: inout GoogleOrderAmounts.Pricing)
        -> (GoogleVoidedSync.Answer, GoogleOrderStore.PricedAhead?)
    {
        var shared = Set<String>()
        for id in answer.ids {
            if ahead.shared.contains(id) { shared.insert(id) }
            ahead.waiting[id, default: 1] -= 1
            if ahead.waiting[id] == 0 {
                ahead.waiting[id] = nil
                ahead.shared.remove(id)
            }
        }
        environment.counters.add("orders_calls")
        var outcome = GoogleOrderAmounts.Summary()
        outcome.calls = 1
        guard var priced = answer.priced else {
            // An id Google does not know fails the whole call: the usual way finds it, the others go on ahead.
            let unknownId = (answer.error as? PlayAPIError)?.code == .notFound
            ahead.refused = ahead.refused || !unknownId
            logger.debug("a call of orders ahead failed: \(answer.error.map { "\($0)" } ?? "no answer")")
            pricing.noteAhead(outcome)
            return (answer.page, nil)
        }
        outcome.orders = priced.orderIds.count
        environment.counters.add("orders_fetched", outcome.orders)
        environment.counters.add("orders_asked_ahead", outcome.orders)
        pricing.noteAhead(outcome)
        var page = answer.page
        if !shared.isDisjoint(with: priced.orderIds) {
            priced.demote(shared)
            page.intake.records = priced.records
            page.prepared = sync.ledger.prepare(priced.records, runId: environment.runId)
        }
        return (page, priced)
    }

    /// After the page is stored with its plainly priced orders: the other orders of its call, stored the usual way
    /// (the page's rows are in the ledger now), none of them queued again.
    mutating func storeRest(_ priced: GoogleOrderStore.PricedAhead, pricing: inout GoogleOrderAmounts.Pricing) throws {
        ahead.asked = priced.orderIds
        var outcome = GoogleOrderAmounts.Summary()
        outcome.priced = priced.pricedRows
        if !priced.rest.orders.isEmpty {
            let stored = try sync.orderAmounts.orders.store(
                priced.rest, runId: environment.runId, logger: logger, on: environment.connection)
            outcome.priced += stored.priced
            outcome.pending += stored.pending
            environment.counters.add("orders_over_refunded", stored.overRefunded)
        }
        pricing.noteAhead(outcome)
    }
}
