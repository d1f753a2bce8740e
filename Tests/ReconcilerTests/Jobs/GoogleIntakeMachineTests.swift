import Foundation
import Ledger
import PlayDeveloperAPI
import RateLimiting
import Testing

@testable import Reconciler

/// The rules of the Google voided intake that only the simulator used to reach, event by event with no store,
/// database or task: when a page's orders are asked ahead, and what ends it; what a stop does to the Orders queue.
@Suite("Google intake: the machine")
struct GoogleIntakeMachineTests {
    typealias Machine = GoogleIntakeMachine
    typealias Paging = GoogleVoidedPagerStateMachineTests

    /// A page of slice 0 holding one whole refund of each order, voided at `millis`.
    static func page(next: String?, orders: [String], millis: Int64 = Paging.origin + 1000)
        -> GoogleVoidedSync.Answer
    {
        let rows = orders.map { id in
            VoidedPurchase(
                purchaseToken: "token-\(id)", orderId: id, purchaseTimeMillis: Paging.origin - Paging.dayMillis,
                voidedTimeMillis: millis, voidedSource: nil, voidedReason: nil)
        }
        let response = VoidedPurchasesListResponse(
            tokenPagination: next.map { .init(nextPageToken: $0) }, voidedPurchases: rows)
        var answer = GoogleVoidedSync.Answer(slice: 0, result: .success(response), seconds: 1.25)
        answer.intake = RefundRecord.intake(response, receivedAt: Paging.now)
        return answer
    }

    static func stores(_ actions: [Machine.Action]) -> [Machine.PageStore] {
        actions.compactMap { if case .storePage(let store) = $0 { store } else { nil } }
    }

    static func lookups(_ actions: [Machine.Action]) -> [Machine.KnownOrdersLookup] {
        actions.compactMap { if case .lookUpKnownOrders(let lookup) = $0 { lookup } else { nil } }
    }

    static func aheadCalls(_ actions: [Machine.Action]) -> [Machine.AheadCall] {
        actions.compactMap { if case .askOrdersAhead(let call) = $0 { call } else { nil } }
    }

    static func orderCalls(_ actions: [Machine.Action]) -> [[String]] {
        actions.compactMap { if case .askOrders(let ids) = $0 { ids } else { nil } }
    }

    /// A machine whose first page was stored and whose first Orders call (1000 ids of earlier pages) was answered
    /// with orders: from here on a page's orders may be asked ahead. Its slice's call for "t1" travels.
    static func askingAhead() throws -> Machine {
        var machine = Machine(paging: Paging.machine([Paging.slice(0, from: 0, to: 10)]))
        _ = machine.start()
        #expect(!machine.mayAskAhead, "no Orders call has been answered yet")
        let first = machine.handle(.pageAnswered(page(next: "t1", orders: ["GPA.first"]), at: Paging.now))
        #expect(lookups(first).isEmpty)
        let store = try #require(stores(first).first)
        #expect(store.afterStoring == ["GPA.first"])
        let earlier = (0..<1000).map { "GPA.earlier.\($0)" }
        let calls = orderCalls(
            machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1, toAsk: earlier + ["GPA.first"]))))
        #expect(calls == [earlier], "a whole call leaves; the last id waits for more")
        let answer = GoogleOrderAmounts.OrdersAnswer(ids: earlier, result: .success(.init([], payloads: [])))
        guard case .storeOrders = try #require(machine.handle(.ordersAnswered(answer)).first) else {
            throw Failure("an answer is stored before anything else")
        }
        _ = machine.handle(.ordersStored(answer, GoogleOrderAmounts.Outcome()))
        #expect(machine.mayAskAhead)
        return machine
    }

    /// A page answered while asking ahead: its unknown orders are looked up, none known, and asked ahead.
    static func waitAhead(_ machine: inout Machine, _ answer: GoogleVoidedSync.Answer) throws -> Machine.AheadCall {
        let lookup = try #require(lookups(machine.handle(.pageAnswered(answer, at: Paging.now))).first)
        let call = try #require(aheadCalls(machine.handle(.knownOrdersFound(lookup, known: []))).first)
        return call
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func onlyOrdersTheLedgerDoesNotKnowAreAskedAhead() throws {
        var machine = try Self.askingAhead()
        let answer = Self.page(next: "t2", orders: ["GPA.new", "GPA.known"])
        let lookup = try #require(Self.lookups(machine.handle(.pageAnswered(answer, at: Paging.now))).first)
        #expect(lookup.ids == ["GPA.known", "GPA.new"])
        let actions = machine.handle(.knownOrdersFound(lookup, known: ["GPA.known"]))
        #expect(Self.aheadCalls(actions).map(\.ids) == [["GPA.new"]])
        #expect(Self.stores(actions).isEmpty, "the page waits for its orders")
        #expect(
            actions.contains {
                if case .launchPage(let call, prepare: false) = $0 { call.token == "t2" } else { false }
            }, "its slice moves on at once")
    }

    /// A refused call ahead (quota, throttling, a missing permission) ends the asking ahead for the run: its page is
    /// stored with its orders asked after storing, and so is every later page, with no lookup.
    @Test(arguments: [PlayAPIError.Code.rateLimited, .dailyQuotaExhausted, .permissionDenied])
    func aRefusalEndsAskingAhead(_ code: PlayAPIError.Code) throws {
        var machine = try Self.askingAhead()
        let call = try Self.waitAhead(&machine, Self.page(next: "t2", orders: ["GPA.a"]))
        let refused = GoogleVoidedSync.AheadAnswer(
            page: call.answer, number: call.page, ids: call.ids, error: PlayAPIError(code, "refused"))
        let store = try #require(Self.stores(machine.handle(.ordersAnsweredAhead(refused))).first)
        #expect(store.pricedAhead == nil && store.afterStoring == ["GPA.a"])
        #expect(!machine.mayAskAhead)
        #expect(machine.orders.summary.calls == 2, "the refused call ahead is counted")

        _ = machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1)))
        let later = machine.handle(.pageAnswered(Self.page(next: "t3", orders: ["GPA.b"]), at: Paging.now))
        #expect(Self.lookups(later).isEmpty)
        #expect(Self.stores(later).first?.afterStoring == ["GPA.b"])
        #expect(
            later.contains { if case .launchPage(_, prepare: true) = $0 { true } else { false } },
            "pages are made ready to write in their call again")
    }

    /// A call ahead failed by an id Google does not know (404) sends only its page the ``Machine/OrdersWay/afterStoring``
    /// way: the next page's orders are asked ahead again.
    @Test func aNotFoundSendsOnlyItsPageAfterStoring() throws {
        var machine = try Self.askingAhead()
        let call = try Self.waitAhead(&machine, Self.page(next: "t2", orders: ["GPA.a", "GPA.gone"]))
        let failed = GoogleVoidedSync.AheadAnswer(
            page: call.answer, number: call.page, ids: call.ids, error: PlayAPIError(.notFound, "no such order"))
        let store = try #require(Self.stores(machine.handle(.ordersAnsweredAhead(failed))).first)
        #expect(store.pricedAhead == nil && Set(store.afterStoring) == ["GPA.a", "GPA.gone"])
        #expect(machine.mayAskAhead)

        _ = machine.handle(.pageStored(store, Machine.StoredPage(inserted: 2)))
        let later = machine.handle(.pageAnswered(Self.page(next: "t3", orders: ["GPA.b"]), at: Paging.now))
        #expect(Self.lookups(later).map(\.ids) == [["GPA.b"]])
    }
}

extension GoogleIntakeMachineTests {
    /// An Orders API order with one whole refund at `millis`, as Google sends it.
    static func order(_ id: String, refundedAt millis: Int64) throws -> PlayOrder {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let time = formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
        let money = #"{"currencyCode":"USD","units":"4","nanos":990000000}"#
        let tax = #"{"currencyCode":"USD","units":"0","nanos":410000000}"#
        let json = #"""
            {"orderId":"\#(id)","purchaseToken":"token-\#(id)","state":"PROCESSED","buyerAddress":{"buyerCountry":"GB"},
            "total":\#(money),"tax":\#(tax),"lineItems":[{"productId":"coins","total":\#(money),"tax":\#(tax),
            "oneTimePurchaseDetails":{"quantity":1}}],"orderHistory":{"refundEvent":{"eventTime":"\#(time)",
            "refundReason":"OTHER","refundDetails":{"total":\#(money),"tax":\#(tax)}}}}
            """#
        return try JSONDecoder().decode(PlayOrder.self, from: Data(json.utf8))
    }

    /// The answer ahead for `call`, priced from these orders.
    static func priced(_ call: Machine.AheadCall, _ orders: [PlayOrder]) -> GoogleVoidedSync.AheadAnswer {
        let answered = GoogleOrderStore.Answered(orders, payloads: orders.map { _ in "{}" }, rendered: false)
        let priced = GoogleOrderStore.priceAhead(call.answer.intake.records, answered: answered)
        var page = call.answer
        page.intake.records = priced.records
        // As the call's task does: the priced rows made ready to write there.
        page.prepared = RefundLedger(appId: "demo-android", prices: ConfiguredPrices()).prepare(
            priced.records, runId: nil)
        return GoogleVoidedSync.AheadAnswer(page: page, number: call.page, ids: call.ids, priced: priced)
    }

    /// Two pages waiting at once share an order: it is asked ahead once (for the first), and priced with neither
    /// page alone; the first page's call stores it right after the page, the second page asks it after storing.
    @Test func anOrderOnTwoWaitingPagesIsAskedOnceAndBothPagesGetIt() throws {
        var machine = try Self.askingAhead()
        let millis = Paging.origin + 1000
        let first = try Self.waitAhead(&machine, Self.page(next: "t2", orders: ["GPA.shared"], millis: millis))
        let second = try Self.waitAhead(
            &machine, Self.page(next: "t3", orders: ["GPA.shared", "GPA.own"], millis: millis + 1000))
        #expect(first.ids == ["GPA.shared"] && second.ids == ["GPA.own"], "the shared order is asked once")

        let firstAnswer = Self.priced(first, [try Self.order("GPA.shared", refundedAt: millis)])
        try #require(firstAnswer.priced?.plain.orders.map(\.orderId) == ["GPA.shared"], "alone, it prices plainly")
        let store = try #require(Self.stores(machine.handle(.ordersAnsweredAhead(firstAnswer))).first)
        #expect(store.write.page == first.page)
        #expect(store.pricedAhead?.plain.orders.isEmpty == true, "this page alone does not hold all its parts")
        #expect(store.pricedAhead?.rest.orders.map(\.orderId) == ["GPA.shared"], "stored right after the page")
        #expect(store.write.records == first.answer.intake.records, "its rows as they came, without the amount")
        #expect(store.batch == nil, "its rows changed since its call: made ready again at the store")
        #expect(store.afterStoring.isEmpty, "not asked again after the first page")

        _ = machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1)))
        let secondAnswer = Self.priced(second, [try Self.order("GPA.own", refundedAt: millis + 1000)])
        let secondStore = try #require(Self.stores(machine.handle(.ordersAnsweredAhead(secondAnswer))).first)
        #expect(secondStore.write.page == second.page)
        #expect(secondStore.pricedAhead?.plain.orders.map(\.orderId) == ["GPA.own"])
        #expect(secondStore.batch?.records == secondStore.write.records, "the batch made ready in its call travels")
        #expect(secondStore.write.records == secondAnswer.page.intake.records, "stored priced")
        #expect(secondStore.write.records != second.answer.intake.records, "the own order's row carries its amount")
        #expect(secondStore.afterStoring == ["GPA.shared"], "the second page gets it after storing")
        #expect(machine.waiting.isEmpty && machine.shared.isEmpty)
    }

    /// A stop ends the asking ahead, and an Orders call refused at the quota gate by it drops what is queued: those
    /// orders wait for the next run's backlog, and the queue is not complete (the backlog's mark stays).
    @Test func aStopDropsTheQueue() throws {
        var machine = try Self.askingAhead()
        let answer = Self.page(next: "t2", orders: ["GPA.known"])
        let lookup = try #require(Self.lookups(machine.handle(.pageAnswered(answer, at: Paging.now))).first)
        let store = try #require(Self.stores(machine.handle(.knownOrdersFound(lookup, known: ["GPA.known"]))).first)
        let later = (0..<1500).map { "GPA.later.\($0)" }
        let calls = Self.orderCalls(machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1, toAsk: later))))
        let call = try #require(calls.first)
        #expect(calls.count == 1 && call.count == 1000, "501 orders stay queued while the paging goes on")

        _ = machine.handle(.stopRequested)
        #expect(!machine.mayAskAhead)
        let refused = GoogleOrderAmounts.OrdersAnswer(ids: call, result: .failure(StoppableQuotaGate.stopped))
        #expect(Self.orderCalls(machine.handle(.ordersAnswered(refused))).isEmpty)
        #expect(machine.orders.dropped)

        // The page whose call was travelling is still stored, its orders not asked ahead; no page call leaves.
        let last = machine.handle(.pageAnswered(Self.page(next: "t3", orders: ["GPA.last"]), at: Paging.now))
        #expect(Self.lookups(last).isEmpty)
        #expect(!last.contains { if case .launchPage = $0 { true } else { false } })
        let lastStore = try #require(Self.stores(last).first)
        let flushed = Self.orderCalls(
            machine.handle(.pageStored(lastStore, Machine.StoredPage(inserted: 1, toAsk: ["GPA.last"]))))
        #expect(flushed == [["GPA.last"]], "none of the dropped orders is asked")
        #expect(!machine.orders.isComplete)
    }

    /// A slice's last page is not held for its orders: it is stored as it comes (closing the window here) and its
    /// orders are asked after storing, at once since no voided call is left.
    @Test func aSlicesLastPageIsStoredAtOnce() throws {
        var machine = try Self.askingAhead()
        let actions = machine.handle(.pageAnswered(Self.page(next: nil, orders: ["GPA.last"]), at: Paging.now))
        #expect(Self.lookups(actions).isEmpty)
        let store = try #require(Self.stores(actions).first)
        #expect(store.pricedAhead == nil && store.afterStoring == ["GPA.last"])
        #expect(store.write.sliceRow == nil, "the last page closes the window in its own transaction")
        let stored = machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1, toAsk: ["GPA.last"])))
        #expect(Self.orderCalls(stored) == [["GPA.last"]])
        #expect(machine.isRunning, "until the Orders answers are stored")
    }

    /// A page whose rows pass its slice's end (a split slice reading on with its token) is its last too.
    @Test func aPagePastItsSlicesEndIsStoredAtOnce() throws {
        var machine = try Self.askingAhead()
        let late = Self.page(next: "t2", orders: ["GPA.late"], millis: Paging.origin + 11 * Paging.dayMillis)
        let actions = machine.handle(.pageAnswered(late, at: Paging.now))
        #expect(Self.lookups(actions).isEmpty)
        #expect(Self.stores(actions).first?.afterStoring == ["GPA.late"])
    }

    /// Once the last voided call is answered, the Orders queue leaves at once, while a page still waits for its
    /// orders ahead, not after that page is stored (that would add an answer time to the end of the run).
    @Test func theQueueLeavesOnceTheLastVoidedCallIsAnswered() throws {
        var machine = try Self.askingAhead()
        let waiting = try Self.waitAhead(&machine, Self.page(next: "t2", orders: ["GPA.a"]))
        let last = machine.handle(.pageAnswered(Self.page(next: nil, orders: ["GPA.b"]), at: Paging.now))
        #expect(Self.stores(last).isEmpty, "the last page is stored after the page before it")
        #expect(Self.orderCalls(last) == [["GPA.first"]], "the order queued since the first page leaves now")

        let priced = Self.priced(waiting, [try Self.order("GPA.a", refundedAt: Paging.origin + 1000)])
        let first = try #require(Self.stores(machine.handle(.ordersAnsweredAhead(priced))).first)
        let second = try #require(
            Self.stores(machine.handle(.pageStored(first, Machine.StoredPage(inserted: 1)))).first)
        #expect(second.afterStoring == ["GPA.b"] && second.write.sliceRow == nil)
        let calls = machine.handle(.pageStored(second, Machine.StoredPage(inserted: 1, toAsk: ["GPA.b"])))
        #expect(Self.orderCalls(calls) == [["GPA.b"]])
    }
}
