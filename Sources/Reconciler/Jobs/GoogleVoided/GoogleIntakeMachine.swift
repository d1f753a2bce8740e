import Foundation
import Ledger
import PlayDeveloperAPI

/// Every decision of the Google voided intake of one window, with no I/O: the paging of its slices
/// (``GoogleVoidedSync/PagerStateMachine``, the paging half), when a page's orders are asked (``OrdersWay``: ahead,
/// or after the page is stored) and the Orders calls' limits (``GoogleOrderAmounts/OrdersQueue``). It takes one
/// ``Event`` at a time and returns the ``Action``s the ``GoogleIntakeRunner`` performs, in order; performing an
/// action may end in another event, handed back at once. Clock readings come in with the events.
///
/// Asking ahead (see `GoogleOrderStore+Ahead.swift` for what the ledger does with the answer): the orders of a page
/// that the ledger does not know are asked in one `orders.batchget` as soon as the page comes, and the page waits
/// for them, its slice moving on at once; it is then stored with the amounts, in its slice's page order.
/// - Only once a call of the run was answered with orders, never after a stop request nor after an ahead call was
///   refused: a refusal ends the asking ahead for the run, and the page that met it is stored and its orders asked
///   after storing. A 404 (an id Google does not know fails the whole call) sends only its page that way.
/// - Never for a slice's last page: it is stored as it comes, and its orders leave with the queue.
/// - An order on two pages waiting at once is asked once, for the first; the pages that share it both take it after
///   storing (neither page alone holds all its parts), where the order is priced from every row the ledger holds.
struct GoogleIntakeMachine {
    private(set) var paging: Paging
    private(set) var orders = GoogleOrderAmounts.OrdersQueue()
    /// What the run did so far (the Orders part is ``orders``' summary).
    private(set) var summary: GoogleVoidedSync.Summary
    let dryRun: Bool
    /// Order ids asked for a page that waits, with how many waiting pages asked each.
    private(set) var waiting: [String: Int] = [:]
    /// Waiting orders another page came with since: asked after storing.
    private(set) var shared: Set<String> = []
    /// An ahead call was refused: no more asking ahead this run.
    private(set) var refused = false
    private var stopping = false
    /// Each answered page's batch and priced orders by page number, until its store.
    private var readied: [Int: Readied] = [:]

    init(paging: Paging, summary: GoogleVoidedSync.Summary = .init()) {
        self.paging = paging
        self.summary = summary
        self.dryRun = paging.dryRun
    }

    /// A voided call travels, a page waits, or the Orders queue is not idle.
    var isRunning: Bool { paging.isPaging || !orders.isIdle }

    /// Whether a page's orders may be asked before it is stored.
    var mayAskAhead: Bool { !dryRun && !refused && !stopping && orders.mayAskAhead }

    /// The first calls (or the window closed, when all its slices are drained).
    mutating func start() -> [Action] {
        perform(paging.start())
    }

    /// Takes one event.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .pageAnswered(let answer, let now):
            return pageAnswered(answer, at: now)
        case .knownOrdersFound(let lookup, let known):
            return answered(lookup.answer, at: lookup.at, way: way(Set(lookup.ids).subtracting(known)))
        case .ordersAnswered(let answer):
            guard answer.refusedByStop else { return [.storeOrders(answer)] }
            orders.refusedByStop()
            return ordersCalls()
        case .ordersAnsweredAhead(let answer):
            return aheadAnswered(answer)
        case .ordersStored(let answer, let outcome):
            orders.stored(answer, outcome: outcome)
            return ordersCalls()
        case .pageStored(let store, let stored):
            return pageStored(store, stored)
        case .newCounted(let fresh):
            summary.inserted += fresh
            return []
        case .stopRequested:
            stopping = true
            paging.stopRequested()
            return []
        }
    }

    /// A voided page: counted, then its orders looked up when they may be asked ahead.
    private mutating func pageAnswered(_ answer: GoogleVoidedSync.Answer, at now: Date) -> [Action] {
        guard case .success(let page) = answer.result else { return answered(answer, at: now, way: .afterStoring) }
        summary.pages += 1
        summary.rows += page.voidedPurchases.count
        summary.quarantined += answer.intake.quarantined.count
        // A slice's last page is stored at once, its orders after storing: held for them, it would end the run an
        // answer time later (and an order it shares with another waiting page one more), while the queue it joins
        // leaves whole as soon as the last voided call is answered.
        guard mayAskAhead, !paging.endsSlice(answer) else { return answered(answer, at: now, way: .afterStoring) }
        let ids = Set(answer.intake.records.filter(\.revokes).map(\.orderId))
        let sharing = ids.filter { waiting[$0] != nil }
        shared.formUnion(sharing)
        let unknown = ids.subtracting(sharing)
        guard !unknown.isEmpty else { return answered(answer, at: now, way: .afterStoring) }
        return [.lookUpKnownOrders(KnownOrdersLookup(answer: answer, at: now, ids: unknown.sorted()))]
    }

    private func way(_ asking: Set<String>) -> OrdersWay {
        asking.isEmpty ? .afterStoring : .ahead(asking.sorted())
    }

    /// Hands the page to the paging half. A page whose orders go ahead moves its slice on (the next page leaves now,
    /// whatever the pricing) and waits for them in a call of its own.
    private mutating func answered(_ answer: GoogleVoidedSync.Answer, at now: Date, way: OrdersWay) -> [Action] {
        let paged = paging.answered(answer, now: now, waitsForOrders: way != .afterStoring)
        let number = paging.lastPage
        var actions: [Action] = []
        if case .ahead(let ids) = way, paging.waitsForOrders(page: number, slice: answer.slice) {
            for id in ids { waiting[id, default: 0] += 1 }
            actions.append(.askOrdersAhead(AheadCall(page: number, ids: ids, answer: answer)))
        } else if answer.prepared != nil {
            readied[number] = Readied(batch: answer.prepared)
        }
        return actions + perform(paged) + ordersCalls()
    }

    /// A page stored: what its call ahead did is counted, its orders asked after storing are queued, and its slice
    /// learns from it.
    private mutating func pageStored(_ store: PageStore, _ stored: StoredPage) -> [Action] {
        summary.inserted += stored.inserted
        summary.updated += stored.updated
        if let priced = store.pricedAhead {
            var outcome = stored.rest
            outcome.priced += priced.pricedRows - stored.demotedRows
            orders.noteAhead(outcome)
        }
        orders.queue(stored.toAsk)
        return perform(paging.stored(store.write, inserted: stored.inserted)) + ordersCalls()
    }

    /// The Orders calls to make now: all that is queued once no voided call is left to answer, at once (the pages
    /// still waiting for their orders ahead add theirs as they are stored), so the run's last Orders calls travel
    /// beside its last pages' calls ahead instead of after them.
    private mutating func ordersCalls() -> [Action] {
        orders.nextCalls(flush: paging.callsEnded).map { .askOrders($0) }
    }

    /// The paging half's actions as the runner performs them: a page's store with its batch and its priced orders.
    private mutating func perform(_ paged: [Paging.Action]) -> [Action] {
        var actions: [Action] = []
        for action in paged {
            switch action {
            case .launch(let call):
                actions.append(.launchPage(call, prepare: !mayAskAhead))
            case .store(let write):
                let ready = readied.removeValue(forKey: write.page)
                actions.append(
                    .storePage(
                        PageStore(write: write, batch: ready?.batch, pricedAhead: ready?.priced, afterStoring: [])))
            case .price(let orderIds):
                // Always right after its page's store: the orders not priced ahead are settled after storing, also
                // once the Orders calls stopped (settling costs no call, and a refund recorded without revocation
                // must not stand beside the same money now voided until a later run asks the order).
                guard case .storePage(var store)? = actions.last else { continue }
                let asked = store.pricedAhead?.orderIds ?? []
                store.afterStoring = Array(Set(orderIds.filter { !asked.contains($0) }))
                actions[actions.count - 1] = .storePage(store)
            case .countNew(let rows):
                actions.append(.countNew(rows))
            case .restart(let slice, let gap):
                if let gap { summary.gap = (from: gap.start, to: gap.end) }
                actions.append(.restart(slice, gap: gap))
            case .split(let kept, let added, let pagesLeft, let allPagesLeft):
                actions.append(.split(kept: kept, added: added, pagesLeft: pagesLeft, allPagesLeft: allPagesLeft))
            case .closeWindow(let checkpoint):
                actions.append(.closeWindow(checkpoint))
            case .cancelCalls:
                actions.append(.cancelPageCalls)
            case .progress(let fraction):
                actions.append(.progress(fraction: fraction))
            }
        }
        return actions
    }
}

extension GoogleIntakeMachine {
    /// A waiting page's Orders answer: orders another page came with meanwhile go back to the way after storing; a
    /// refused call ends the asking ahead (a 404 only sends this page after storing). The page is stored once the
    /// pages of its slice before it are.
    private mutating func aheadAnswered(_ answer: GoogleVoidedSync.AheadAnswer) -> [Action] {
        var sharedHere = Set<String>()
        for id in answer.ids {
            if shared.contains(id) { sharedHere.insert(id) }
            waiting[id, default: 1] -= 1
            if waiting[id] == 0 {
                waiting[id] = nil
                shared.remove(id)
            }
        }
        var outcome = GoogleOrderAmounts.Summary()
        outcome.calls = 1
        var page = answer.page
        var ready = Readied(batch: page.prepared)
        if var priced = answer.priced {
            outcome.orders = priced.orderIds.count
            if !sharedHere.isDisjoint(with: priced.orderIds) {
                priced.demote(sharedHere)
                page.intake.records = priced.records
                // Its rows changed: made ready again at the store.
                ready.batch = nil
            }
            ready.priced = priced
        } else {
            let unknownId = (answer.error as? PlayAPIError)?.code == .notFound
            refused = refused || !unknownId
        }
        orders.noteAhead(outcome)
        readied[answer.number] = ready
        let paged = paging.ordersAnswered(page: answer.number, slice: page.slice, records: page.intake.records)
        return perform(paged) + ordersCalls()
    }

    /// After the last event: how the paging ended, and what the run did.
    func finish() -> (outcome: Paging.Outcome, summary: GoogleVoidedSync.Summary) {
        var summary = summary
        summary.orders = orders.summary
        return (paging.finish(), summary)
    }
}
