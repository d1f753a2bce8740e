import Foundation
import Ledger
import PlayDeveloperAPI
import Testing

@testable import Reconciler

/// A page whose orders are asked before it is stored, event by event with no store, database or task: its slice's
/// next page leaves at once, whatever the pricing, and the page is stored when its orders come, in its slice's page
/// order, the slice row and the checkpoint never passing a page not stored.
@Suite("Google voided paging: a page held for its orders")
struct GoogleVoidedPagerHeldPageTests {
    typealias Machine = GoogleVoidedSync.PagerStateMachine
    typealias Call = Machine.Call
    typealias Paging = GoogleVoidedPagerStateMachineTests

    static func hasStore(_ actions: [Machine.Action]) -> Bool {
        actions.contains { if case .store = $0 { true } else { false } }
    }

    /// The page's rows as its Orders answer returns them: the same rows, a currency on each.
    static func priced(_ answer: GoogleVoidedSync.Answer) -> [RefundRecord] {
        answer.intake.records.map { record in
            var record = record
            record.currency = "EUR"
            return record
        }
    }

    @Test func theNextPageLeavesWhileThePageBeforeWaitsForItsOrders() throws {
        var machine = Paging.machine([Paging.slice(0, from: 0, to: 10)])
        _ = machine.start()
        let first = Paging.page(0, next: "t1", voidedAt: [Paging.origin + 1000])
        #expect(
            machine.answered(first, now: Paging.now, waitsForOrders: true) == [
                .launch(Call(slice: 0, start: Paging.day(0), end: Paging.day(10), token: "t1"))
            ])
        let firstNumber = machine.lastPage
        #expect(machine.waitsForOrders(page: firstNumber, slice: 0))
        #expect(machine.isPaging)

        // The second page comes before the first one's orders: its next page leaves, its store waits behind.
        let second = Paging.page(0, next: "t2", voidedAt: [Paging.origin + 2 * Paging.dayMillis])
        #expect(
            machine.answered(second, now: Paging.now) == [
                .launch(Call(slice: 0, start: Paging.day(0), end: Paging.day(10), token: "t2"))
            ])
        #expect(machine.slices[0].token == "t2", "the paging has moved on")

        // The first page's orders: it is stored, priced, with the slice row as of that page.
        let priced = Self.priced(first)
        let stored = machine.ordersAnswered(page: firstNumber, slice: 0, records: priced)
        let write = try #require(Paging.write(in: stored))
        #expect(write.records == priced && write.page == firstNumber)
        #expect(write.sliceRow?.token == "t1" && write.sliceRow?.pagesDone == 1)
        #expect(write.checkpoint.pagesDone == 1)
        #expect(stored.last == .price(orderIds: ["GPA.0.0"]))

        // Once it is stored, the second page follows, its slice row one page further.
        let next = machine.stored(write, inserted: 1)
        let secondWrite = try #require(Paging.write(in: next))
        #expect(secondWrite.records == second.intake.records)
        #expect(secondWrite.sliceRow?.token == "t2" && secondWrite.sliceRow?.pagesDone == 2)
        #expect(secondWrite.checkpoint.pagesDone == 2)
        _ = machine.stored(secondWrite, inserted: 1)
        #expect(machine.isPaging, "the call for t2 still travels")
    }

    @Test func aSlicesPagesAreStoredInTheirOrderWhateverOrderTheirOrdersComeIn() throws {
        var machine = Paging.machine([Paging.slice(0, from: 0, to: 10)])
        _ = machine.start()
        let first = Paging.page(0, next: "t1", voidedAt: [Paging.origin + 1000])
        _ = machine.answered(first, now: Paging.now, waitsForOrders: true)
        let firstNumber = machine.lastPage
        let second = Paging.page(0, next: "t2", voidedAt: [Paging.origin + 2 * Paging.dayMillis])
        _ = machine.answered(second, now: Paging.now, waitsForOrders: true)
        let secondNumber = machine.lastPage

        #expect(machine.ordersAnswered(page: secondNumber, slice: 0, records: Self.priced(second)) == [])
        let write = try #require(
            Paging.write(in: machine.ordersAnswered(page: firstNumber, slice: 0, records: Self.priced(first))))
        #expect(write.page == firstNumber && write.sliceRow?.token == "t1")
        let secondWrite = try #require(Paging.write(in: machine.stored(write, inserted: 1)))
        #expect(secondWrite.page == secondNumber && secondWrite.sliceRow?.token == "t2")
    }

    /// Slice 0's last page waits for its orders while slice 1's last page is stored: the window must not close with
    /// slice 1's page, nor the high-water mark pass slice 0; it closes with slice 0's page, once stored.
    @Test func theCheckpointDoesNotPassAPageStillWaitingForItsOrders() throws {
        var machine = Paging.machine([Paging.slice(0, from: 0, to: 5), Paging.slice(1, from: 5, to: 10)])
        _ = machine.start()
        let last0 = Paging.page(0, next: nil, voidedAt: [Paging.origin + 1000])
        #expect(machine.answered(last0, now: Paging.now, waitsForOrders: true) == [])
        let number0 = machine.lastPage

        let last1 = machine.answered(
            Paging.page(1, next: nil, voidedAt: [Paging.origin + 6 * Paging.dayMillis]), now: Paging.now)
        let write1 = try #require(Paging.write(in: last1))
        #expect(write1.sliceRow?.drained == true, "slice 1's own row says drained")
        #expect(write1.checkpoint.windowEnd == Paging.windowEnd, "the window stays open")
        #expect(write1.checkpoint.highWater == nil, "slice 0, first of the window, is not stored drained")
        _ = machine.stored(write1, inserted: 1)
        #expect(machine.isPaging, "no call travels, but a page waits for its orders")

        let closing = try #require(
            Paging.write(in: machine.ordersAnswered(page: number0, slice: 0, records: Self.priced(last0))))
        #expect(closing.sliceRow == nil, "the window's slices are forgotten with its last stored page")
        #expect(closing.checkpoint.highWater == Paging.windowEnd && closing.checkpoint.windowEnd == nil)
        _ = machine.stored(closing, inserted: 1)
        #expect(!machine.isPaging)
    }

    /// A refused token restarts its slice while a page of the old chain waits: that page is still stored, with the
    /// slice row restarted (a crash then reads the slice again from its start, never from the refused token).
    @Test func aPageWaitingWhenItsSliceRestartsIsStoredWithTheRestartedRow() throws {
        var machine = Paging.machine([Paging.slice(0, from: 0, to: 10, token: "old")])
        _ = machine.start()
        let page = Paging.page(0, next: "t1", voidedAt: [Paging.origin + 1000])
        _ = machine.answered(page, now: Paging.now, waitsForOrders: true)
        let number = machine.lastPage
        var restarted = Paging.slice(0, from: 0, to: 10)
        restarted.pagesDone = 1
        restarted.rowsDone = 1
        #expect(
            machine.answered(Paging.failure(0, Paging.refused()), now: Paging.now) == [
                .restart(restarted, gap: nil),
                .launch(Call(slice: 0, start: Paging.day(0), end: Paging.day(10), token: nil)),
            ])
        let write = try #require(
            Paging.write(in: machine.ordersAnswered(page: number, slice: 0, records: Self.priced(page))))
        #expect(write.sliceRow == restarted)
        #expect(!Self.hasStore(machine.stored(write, inserted: 1)))
    }

    /// Pages wait for their orders up to `heldPerSlice` at once; the call after them leaves when the first is stored.
    @Test func aSliceHoldsAtMostSoManyPagesAndGoesOnWhenOneIsStored() throws {
        var machine = Paging.machine([Paging.slice(0, from: 0, to: 10)])
        _ = machine.start()
        var pages: [(number: Int, answer: GoogleVoidedSync.Answer)] = []
        for index in 1...Machine.heldPerSlice {
            let answer = Paging.page(0, next: "t\(index)", voidedAt: [Paging.origin + Int64(index) * 1000])
            let actions = machine.answered(answer, now: Paging.now, waitsForOrders: true)
            #expect(actions.contains { if case .launch = $0 { true } else { false } } == (index < Machine.heldPerSlice))
            pages.append((machine.lastPage, answer))
        }
        #expect(machine.inFlight.isEmpty)

        let released = machine.ordersAnswered(
            page: pages[0].number, slice: 0, records: Self.priced(pages[0].answer))
        let last = "t\(Machine.heldPerSlice)"
        #expect(released.first == .launch(Call(slice: 0, start: Paging.day(0), end: Paging.day(10), token: last)))
        #expect(Paging.write(in: released)?.sliceRow?.token == "t1")
    }
}
