import Foundation
import PlayDeveloperAPI
import Testing

@testable import Reconciler

extension GoogleIntakeMachineTests {
    /// Once an Orders call is refused (the day's budget spent), no more are made this run, but a page stored after it
    /// still has its orders settled after storing: settling costs no call, and sets aside refunds recorded without
    /// revocation that the page's voided rows may now show revoked (the same money counted twice until a later run
    /// asked those orders). The orders themselves wait for the next run's backlog.
    @Test func aPageStoredAfterTheOrdersCallsStoppedStillSettlesItsOrders() throws {
        var machine = try Self.askingAhead()
        let answer = Self.page(next: "t2", orders: ["GPA.known"])
        let lookup = try #require(Self.lookups(machine.handle(.pageAnswered(answer, at: Paging.now))).first)
        let store = try #require(Self.stores(machine.handle(.knownOrdersFound(lookup, known: ["GPA.known"]))).first)
        let later = (0..<1500).map { "GPA.later.\($0)" }
        let call = try #require(
            Self.orderCalls(machine.handle(.pageStored(store, Machine.StoredPage(inserted: 1, toAsk: later)))).first)
        let refused = GoogleOrderAmounts.OrdersAnswer(
            ids: call, result: .failure(PlayAPIError(.dailyQuotaExhausted, "Queries per day")))
        guard case .storeOrders = try #require(machine.handle(.ordersAnswered(refused)).first) else {
            throw Failure("a refusal is stored (its orders' notes) before anything else")
        }
        var outcome = GoogleOrderAmounts.Outcome()
        outcome.summary.stopped = true
        #expect(Self.orderCalls(machine.handle(.ordersStored(refused, outcome))).isEmpty)
        #expect(machine.orders.summary.stopped && !machine.mayAskAhead)

        let next = machine.handle(.pageAnswered(Self.page(next: "t3", orders: ["GPA.b", "GPA.c"]), at: Paging.now))
        let nextStore = try #require(Self.stores(next).first)
        #expect(Set(nextStore.afterStoring) == ["GPA.b", "GPA.c"], "the page's orders are settled after storing")
        let calls = Self.orderCalls(
            machine.handle(.pageStored(nextStore, Machine.StoredPage(inserted: 2, toAsk: ["GPA.b"]))))
        #expect(calls.isEmpty, "no Orders call after the refusal")
    }
}
