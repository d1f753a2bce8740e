import Foundation
import Ledger
import PlayDeveloperAPI
import Testing

@testable import Reconciler

/// The split rule near the end of a window, with no store, database or task: under the quota gate each chain pages
/// one page per answer time, so a chain with more than a page left when the last quota window opens makes that window
/// wait an answer time per page. Such a chain is cut into as many parts as leave each one page or less.
@Suite("Google voided paging: the split rule at the last quota window")
struct GoogleVoidedSplitRuleTests {
    typealias Machine = GoogleVoidedSync.PagerStateMachine

    static func parts(
        _ own: Double, _ live: [Double], splits: Int = 0, stored: Int, startCount: Int = 12, traveling: Int = 12
    ) -> Int {
        GoogleVoidedSync.splitParts(
            own, live: live, traveling: traveling, startCount: startCount, splits: splits, stored: stored, burst: 30)
    }

    @Test func aChainWithMoreThanAPageForTheLastWindowIsCutIntoPartsOfLessThanAPage() {
        // 90 calls made, 18 left: all in the last window. 1.4 pages would be two calls one after the other (the
        // case measured: a chain's second call in the last window, an answer time late); two parts of 0.7 are the
        // same two calls at once.
        let live = [1.4, 1.2] + Array(repeating: 1.0, count: 14)
        #expect(Self.parts(1.4, live, stored: 90) == 2)
        // 2.6 pages: four parts of 0.65 (three of 0.87 would leave no room for the estimate's error).
        #expect(Self.parts(2.6, [2.6] + Array(repeating: 1.0, count: 14), stored: 90) == 4)
        // A page or less: kept whole, however late.
        #expect(Self.parts(1.0, Array(repeating: 1.0, count: 16), stored: 90) == 1)
        #expect(Self.parts(0.7, [0.7, 1, 1], stored: 90) == 1)
    }

    @Test func aCutNeverOpensAnotherWindowNorPassesTheSplitBudget() {
        // 90 + 27 calls: the last window has 3 to spare. 4.5 pages are 5 calls whole, 6 in six parts of 0.75 (28 in
        // the last window, two to spare: made).
        let live = [4.5] + Array(repeating: 1.0, count: 22)
        #expect(Self.parts(4.5, live, stored: 90) == 6)
        // The last window full but for one call: no cut at all.
        #expect(Self.parts(1.5, [1.5] + Array(repeating: 1.0, count: 27), stored: 90) == 1)
        // Two splits left of 3 × 12: three parts at most.
        #expect(Self.parts(4.5, [4.5, 1, 1], splits: 34, stored: 90) == 3)
        #expect(Self.parts(4.5, [4.5, 1, 1], splits: 36, stored: 90) == 1)
    }

    @Test func partsAreCutShortOfAPageOnlyWhereTheLastWindowHasRoom() {
        // 1.2 pages: two parts of 0.6, never three of 0.4.
        #expect(GoogleVoidedSync.endParts(1.2, live: [1.2, 1, 1], stored: 90, burst: 30, budget: 24) == 2)
        // 3 pages with 25 other chains: four parts of 0.75 would make the last window 29 calls; three of one page
        // make no call more than the chain whole.
        let others = Array(repeating: 1.0, count: 25)
        #expect(GoogleVoidedSync.endParts(3.0, live: [3.0] + others, stored: 90, burst: 30, budget: 24) == 3)
        #expect(GoogleVoidedSync.endParts(3.0, live: [3.0] + others.dropLast(), stored: 90, burst: 30, budget: 24) == 4)
    }

    @Test func aRoundOrMoreBeforeTheLastWindowTheChainIsOnlyHalvedAsBefore() {
        // 54 calls made and 64 projected: 6 calls before the last window for 4 chains, which take each to 1.5
        // pages; the long chain has 2 beyond: halved (not cut in 3).
        #expect(Self.parts(3.5, [3.5, 2, 2, 2], stored: 54, startCount: 4, traveling: 4) == 2)
        // 48 made and 62 projected: 12 calls before the last window take each of 6 chains to 2 pages; 1.2 beyond is
        // kept (the rule a round or more before the last window: 1.5).
        #expect(Self.parts(3.2, [3.2, 2, 2, 2, 2, 2], stored: 48, startCount: 6, traveling: 6) == 1)
    }

    @Test func theRestOfASliceIsCutInEqualSpansAfterItsLastRow() throws {
        let origin = GoogleVoidedPagerStateMachineTests.origin
        let day = GoogleVoidedPagerStateMachineTests.dayMillis
        var slice = VoidedSlice(
            number: 0, start: VoidedSlice.date(millis: origin), end: VoidedSlice.date(millis: origin + 4 * day))
        slice.token = "t1"
        slice.pagesDone = 1
        slice.rowsDone = 1000
        let (kept, added) = try #require(GoogleVoidedSync.cut(slice, lastSeen: origin + day, into: 3, number: 5))
        #expect(kept.end == VoidedSlice.date(millis: origin + 2 * day) && kept.token == "t1" && kept.rowsDone == 1000)
        #expect(added.map(\.number) == [5, 6])
        #expect(added[0].start == VoidedSlice.date(millis: origin + 2 * day + 1))
        #expect(added[0].end == VoidedSlice.date(millis: origin + 3 * day))
        #expect(added[1].start == VoidedSlice.date(millis: origin + 3 * day + 1) && added[1].end == slice.end)
        #expect(added.allSatisfy { $0.token == nil && $0.pagesDone == 0 && !$0.drained })
        // A page or less after its last row: not cut.
        #expect(GoogleVoidedSync.cut(slice, lastSeen: nil, into: 3, number: 5)?.added == nil)
        slice.rowsDone = 300
        #expect(GoogleVoidedSync.cut(slice, lastSeen: origin + day, into: 2, number: 5)?.added == nil)
    }
}

/// The cuts as the paging makes them, event by event.
@Suite("Google voided paging: cuts made by the state machine")
struct GoogleVoidedSplitMachineTests {
    typealias Machine = GoogleVoidedSync.PagerStateMachine
    typealias Call = Machine.Call
    typealias Pages = GoogleVoidedPagerStateMachineTests
    static let origin = Pages.origin
    static let day = Pages.dayMillis

    /// Slice 0 spans three and a half days, slice 1 one day; 2 chains under a quota window of 30 calls.
    static func machine() -> Machine {
        Machine(
            app: "demo-android", windowEnd: Pages.windowEnd,
            slices: [Pages.slice(0, from: 0, to: 3.5), Pages.slice(1, from: 5, to: 6)],
            checkpoint: Pages.emptyCheckpoint, sliceCap: 12, burst: 30, dryRun: false)
    }

    /// Answers and stores a page of `slice`: the actions of its store.
    static func page(_ machine: inout Machine, _ slice: Int, next: String?, voidedAt: [Int64]) throws -> [Machine
        .Action]
    {
        let actions = machine.answered(Pages.page(slice, next: next, voidedAt: voidedAt), now: Pages.now)
        let write = try #require(Pages.write(in: actions))
        return machine.stored(write, inserted: write.records.count)
    }

    /// Slice 1's rows, one a page, 0.03 days apart: about one page left whatever it has read.
    static func fillerRow(_ page: Int) -> Int64 { origin + 5 * day + Int64(page + 1) * day * 3 / 100 }

    static func cuts(_ actions: [Machine.Action]) -> [(kept: VoidedSlice, added: VoidedSlice)] {
        actions.compactMap { action in
            guard case .split(let kept, let added, _, _) = action else { return nil }
            return (kept, added)
        }
    }

    /// 29 pages of slice 1, then slice 0's first page: 1000 rows in its first day, 2.5 pages left for the last
    /// window (31 to 34 calls in all): cut into 3 parts of 0.83 pages, saved from the last part back.
    @Test func aChainWithTwoAndAHalfPagesForTheLastWindowIsCutInThree() throws {
        var machine = Self.machine()
        _ = machine.start()
        for page in 0..<29 {
            let actions = try Self.page(&machine, 1, next: "s1-\(page)", voidedAt: [Self.fillerRow(page)])
            #expect(Self.cuts(actions).isEmpty)
        }
        let times = (1...1000).map { Self.origin + Int64($0) * Self.day / 1000 }
        let actions = try Self.page(&machine, 0, next: "t1", voidedAt: times)

        let last = Self.origin + Self.day
        let third: Int64 = 72_000_000  // 2.5 days / 3
        var kept = Pages.slice(0, from: 0, to: 1, token: "t1")
        kept.end = VoidedSlice.date(millis: last + third)
        kept.pagesDone = 1
        kept.rowsDone = 1000
        let second = VoidedSlice(
            number: 2, start: VoidedSlice.date(millis: last + third + 1),
            end: VoidedSlice.date(millis: last + 2 * third))
        let third3 = VoidedSlice(number: 3, start: VoidedSlice.date(millis: last + 2 * third + 1), end: Pages.day(3.5))
        var wider = kept
        wider.end = second.end
        let cuts = Self.cuts(actions)
        #expect(cuts.count == 2)
        #expect(cuts.first?.kept == wider && cuts.first?.added == third3)
        #expect(cuts.last?.kept == kept && cuts.last?.added == second)
        #expect(actions.contains(.launch(Call(slice: 2, start: second.start, end: second.end, token: nil))))
        #expect(actions.contains(.launch(Call(slice: 3, start: third3.start, end: third3.end, token: nil))))
        #expect(machine.slices.map(\.number) == [0, 1, 2, 3] && machine.slices[0] == kept)
        #expect(machine.inFlight == [0, 1, 2, 3])
        // The totals and the checkpoint are the pages' own: a cut adds none.
        #expect(machine.checkpoint.pagesDone == 30 && machine.checkpoint.rowsDone == 1029)
        #expect(machine.checkpoint.highWater == nil)
    }

    /// Slice 0's page is stored first, while the last window is far; slice 1 then pages on alone. When less than a
    /// round of calls is left before the last window (its 28th page, 29 calls), slice 0, with no page of its own
    /// stored since, is cut at slice 1's store: 2.5 pages in three parts.
    @Test func aChainWithNoPageOfItsOwnNearTheEndIsCutAtAnothersStore() throws {
        var machine = Self.machine()
        _ = machine.start()
        let times = (1...1000).map { Self.origin + Int64($0) * Self.day / 1000 }
        #expect(Self.cuts(try Self.page(&machine, 0, next: "t1", voidedAt: times)).isEmpty)
        var cutAt: Int?
        for page in 0..<29 where cutAt == nil {
            let actions = try Self.page(&machine, 1, next: "s1-\(page)", voidedAt: [Self.fillerRow(page)])
            let cuts = Self.cuts(actions)
            if !cuts.isEmpty {
                cutAt = machine.lastPage
                #expect(cuts.allSatisfy { $0.kept.number == 0 } && cuts.map(\.added.number) == [3, 2])
            }
        }
        #expect(cutAt == 29)
        #expect(machine.slices.count == 4 && machine.slices[1].end == Pages.day(6))
    }
}
