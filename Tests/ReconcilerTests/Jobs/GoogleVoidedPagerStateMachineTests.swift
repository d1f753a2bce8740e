import Foundation
import Ledger
import PlayDeveloperAPI
import Testing

@testable import Reconciler

/// The paging decisions of the Google voided sync, event by event, with no store, database or task: what each answer
/// launches, stores, splits or stops. Expected calls, slices and checkpoints are worked out by hand from the slices'
/// bounds below.
@Suite("Google voided paging: the state machine")
struct GoogleVoidedPagerStateMachineTests {
    typealias Machine = GoogleVoidedSync.PagerStateMachine
    typealias Call = Machine.Call

    /// 2026-01-01T00:00:00Z, and the window's days counted from it.
    static let origin: Int64 = 1_767_225_600_000
    static let dayMillis: Int64 = 86_400_000
    static func day(_ days: Double) -> Date { VoidedSlice.date(millis: origin + Int64(days * Double(dayMillis))) }
    /// Within Google's 30 days of every slice below.
    static let now = day(12)
    static let windowEnd = day(10)

    static func slice(_ number: Int, from: Double, to: Double, token: String? = nil, drained: Bool = false)
        -> VoidedSlice
    {
        var slice = VoidedSlice(number: number, start: day(from), end: day(to))
        slice.token = token
        slice.drained = drained
        return slice
    }

    static let emptyCheckpoint = SyncCheckpoint(
        job: GoogleVoidedSync.job, app: "demo-android", highWater: nil, windowStart: day(0), windowEnd: windowEnd,
        pageToken: nil, pagesDone: 0, rowsDone: 0, callMillis: nil)

    static func machine(_ slices: [VoidedSlice], cap: Int = 1, dryRun: Bool = false) -> Machine {
        Machine(
            app: "demo-android", windowEnd: windowEnd, slices: slices, checkpoint: emptyCheckpoint, sliceCap: cap,
            burst: nil, dryRun: dryRun)
    }

    /// A page of `slice` holding one void at each of `voidedAt` (milliseconds), answered in 1.25 s.
    static func page(_ slice: Int, next: String?, voidedAt: [Int64]) -> GoogleVoidedSync.Answer {
        let rows = voidedAt.enumerated().map { index, millis in
            VoidedPurchase(
                purchaseToken: "token-\(slice)-\(index)", orderId: "GPA.\(slice).\(index)",
                purchaseTimeMillis: origin - dayMillis, voidedTimeMillis: millis, voidedSource: nil, voidedReason: nil)
        }
        let response = VoidedPurchasesListResponse(
            tokenPagination: next.map { .init(nextPageToken: $0) }, voidedPurchases: rows)
        var answer = GoogleVoidedSync.Answer(slice: slice, result: .success(response), seconds: 1.25)
        answer.intake = RefundRecord.intake(response, receivedAt: now)
        return answer
    }

    static func failure(_ slice: Int, _ error: any Error) -> GoogleVoidedSync.Answer {
        GoogleVoidedSync.Answer(slice: slice, result: .failure(error), seconds: 0.5)
    }

    static func refused() -> PlayAPIError { PlayAPIError(.badRequest, "page token invalid") }

    static func write(in actions: [Machine.Action]) -> Machine.PageWrite? {
        for case .store(let write) in actions { return write }
        return nil
    }

    @Test func everyUndrainedSliceIsLaunchedAtStartFromItsOwnToken() {
        var machine = Self.machine([
            Self.slice(0, from: 0, to: 4), Self.slice(1, from: 4, to: 7, drained: true),
            Self.slice(2, from: 7, to: 10, token: "resumed"),
        ])
        #expect(
            machine.start() == [
                .launch(Call(slice: 0, start: Self.day(0), end: Self.day(4), token: nil)),
                .launch(Call(slice: 2, start: Self.day(7), end: Self.day(10), token: "resumed")),
            ])
        #expect(machine.inFlight == [0, 2])
    }

    @Test func aWindowWhoseSlicesAreAllDrainedIsClosedAtStart() {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10, drained: true)])
        let closed = SyncCheckpoint(
            job: GoogleVoidedSync.job, app: "demo-android", highWater: Self.windowEnd, windowStart: nil,
            windowEnd: nil, pageToken: nil, pagesDone: 0, rowsDone: 0, callMillis: nil)
        #expect(machine.start() == [.closeWindow(closed)])
        #expect(!machine.isPaging)
    }

    @Test func aPageWithANextTokenLaunchesThatPageBeforeItIsStored() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10)])
        _ = machine.start()
        let answer = Self.page(0, next: "t1", voidedAt: [Self.origin + 1000, Self.origin + 5 * Self.dayMillis])
        let actions = machine.answered(answer, now: Self.now)

        var saved = Self.slice(0, from: 0, to: 10, token: "t1")
        saved.pagesDone = 1
        saved.rowsDone = 2
        var checkpoint = Self.emptyCheckpoint
        checkpoint.pagesDone = 1
        checkpoint.rowsDone = 2
        checkpoint.callMillis = 1250
        let write = Machine.PageWrite(
            slice: 0, records: answer.intake.records, quarantined: [], expectNew: false, checkpoint: checkpoint,
            sliceRow: saved, page: 1)
        #expect(
            actions == [
                .launch(Call(slice: 0, start: Self.day(0), end: Self.day(10), token: "t1")),
                .store(write), .price(orderIds: ["GPA.0.0", "GPA.0.1"]),
            ])
        // Its last row is half way through the slice.
        #expect(machine.stored(write, inserted: 2) == [.progress(fraction: 0.5)])

        // Both rows were new: the next page of the slice is expected new too.
        let second = machine.answered(
            Self.page(0, next: "t2", voidedAt: [Self.origin + 6 * Self.dayMillis]), now: Self.now)
        #expect(try #require(Self.write(in: second)).expectNew)
    }

    @Test func theLastPageOfTheLastSliceClosesTheWindowWithIt() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 5), Self.slice(1, from: 5, to: 10)])
        _ = machine.start()

        // Slice 0 drains first: the high-water mark moves to its end, slice 1 still travels.
        let first = machine.answered(Self.page(0, next: nil, voidedAt: [Self.origin + 1000]), now: Self.now)
        let drainedFirst = try #require(Self.write(in: first))
        #expect(drainedFirst.sliceRow?.drained == true && drainedFirst.sliceRow?.token == nil)
        #expect(drainedFirst.checkpoint.highWater == Self.day(5))
        #expect(drainedFirst.checkpoint.windowEnd == Self.windowEnd)
        #expect(machine.stored(drainedFirst, inserted: 1).last == .progress(fraction: 0.5))
        #expect(machine.isPaging)

        let last = machine.answered(
            Self.page(1, next: nil, voidedAt: [Self.origin + 6 * Self.dayMillis]), now: Self.now)
        let closing = try #require(Self.write(in: last))
        #expect(closing.sliceRow == nil, "the window's slices are forgotten with its last page")
        let closed = SyncCheckpoint(
            job: GoogleVoidedSync.job, app: "demo-android", highWater: Self.windowEnd, windowStart: nil,
            windowEnd: nil, pageToken: nil, pagesDone: 0, rowsDone: 0, callMillis: 1250)
        #expect(closing.checkpoint == closed)
        #expect(!last.contains { if case .launch = $0 { true } else { false } })
        #expect(machine.stored(closing, inserted: 1) == [.progress(fraction: 1)])
        #expect(!machine.isPaging)
        guard case .drained(let slices, let typical) = machine.finish() else {
            Issue.record("the window should be drained")
            return
        }
        #expect(slices == 2 && typical == 1250)
    }

    @Test func aRepeatedTokenStopsTheWindowAndItsPageIsNotStored() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 5, token: "t7"), Self.slice(1, from: 5, to: 10)])
        _ = machine.start()
        let actions = machine.answered(Self.page(0, next: "t7", voidedAt: [Self.origin + 1000]), now: Self.now)
        #expect(actions == [.cancelCalls])
        #expect(machine.slices[0].token == "t7" && machine.slices[0].pagesDone == 0)

        // Slice 1's page, answered before its call could be cancelled, is stored; its next page is not asked.
        let late = machine.answered(
            Self.page(1, next: "u1", voidedAt: [Self.origin + 6 * Self.dayMillis]), now: Self.now)
        #expect(Self.write(in: late)?.sliceRow?.token == "u1")
        #expect(!late.contains { if case .launch = $0 { true } else { false } })
        #expect(!late.contains(.cancelCalls), "only the first error cancels")
        #expect(!machine.isPaging)

        guard case .failed(let error) = machine.finish() else {
            Issue.record("the window should have failed")
            return
        }
        let loop = try #require(error as? ReconcilerError)
        #expect(loop.code == .storeLoop)
        #expect("\(loop)".contains("slice 0: the store sent page token \"t7\" again after 1 pages"), "\(loop)")
    }

    @Test func aRefusedPageTokenRestartsItsSliceOnceAndASecondRefusalStops() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10, token: "old")])
        _ = machine.start()
        let restarted = Self.slice(0, from: 0, to: 10)
        #expect(
            machine.answered(Self.failure(0, Self.refused()), now: Self.now) == [
                .restart(restarted, gap: nil),
                .launch(Call(slice: 0, start: Self.day(0), end: Self.day(10), token: nil)),
            ])

        let page = machine.answered(Self.page(0, next: "new", voidedAt: [Self.origin + 1000]), now: Self.now)
        #expect(page.first == .launch(Call(slice: 0, start: Self.day(0), end: Self.day(10), token: "new")))
        #expect(machine.answered(Self.failure(0, Self.refused()), now: Self.now) == [.cancelCalls])
        guard case .failed(let error) = machine.finish() else {
            Issue.record("the second refusal should stop the window")
            return
        }
        #expect((error as? PlayAPIError)?.code == .badRequest)
    }

    @Test func aRestartedSliceOlderThanGoogleKeepsStartsAtTheOldestTimeWithAGap() {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10, token: "old")])
        _ = machine.start()
        // 30 days less the 10 minutes' margin before day 31: day 1 plus 10 minutes.
        let oldest = Self.day(1).addingTimeInterval(600)
        var restarted = Self.slice(0, from: 0, to: 10)
        restarted.start = oldest
        #expect(
            machine.answered(Self.failure(0, Self.refused()), now: Self.day(31)) == [
                .restart(restarted, gap: DateInterval(start: Self.day(0), end: oldest)),
                .launch(Call(slice: 0, start: oldest, end: Self.day(10), token: nil)),
            ])
    }

    @Test func anErrorOtherThanARefusedTokenStopsAndCancelledCallsAreNoError() {
        var machine = Self.machine([Self.slice(0, from: 0, to: 5), Self.slice(1, from: 5, to: 10)])
        _ = machine.start()
        // A refusal on a slice without a token is the window's bounds being refused, not an expired token.
        #expect(machine.answered(Self.failure(0, Self.refused()), now: Self.now) == [.cancelCalls])
        #expect(machine.answered(Self.failure(1, CancellationError()), now: Self.now) == [])
        guard case .failed(let error) = machine.finish() else {
            Issue.record("the window should have failed")
            return
        }
        #expect(error is PlayAPIError)
    }

    @Test func afterAStopRequestNoCallLeavesButThePageIsStored() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10, token: "t1")])
        _ = machine.start()
        machine.stopRequested()
        let actions = machine.answered(Self.page(0, next: "t2", voidedAt: [Self.origin + 1000]), now: Self.now)
        #expect(actions.count == 2)
        #expect(Self.write(in: actions)?.sliceRow?.token == "t2")
        #expect(actions.last == .price(orderIds: ["GPA.0.0"]))
        #expect(!machine.isPaging)
        guard case .unfinished = machine.finish() else {
            Issue.record("a stopped window is unfinished")
            return
        }
    }

    @Test func aRefusedTokenAfterAStopRequestRestartsWithoutACall() {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10, token: "old")])
        _ = machine.start()
        machine.stopRequested()
        #expect(
            machine.answered(Self.failure(0, Self.refused()), now: Self.now) == [
                .restart(Self.slice(0, from: 0, to: 10), gap: nil)
            ])
    }

    /// Slice 1 drains while slice 0 has read 1000 rows in its first day of ten: about 9 pages are left to one chain,
    /// so its rest is halved at day 5.5 (between its last row, day 1, and its end) and the new slice 2 leaves at once.
    @Test func aSliceThatWouldPageAloneIsHalvedAndTheNewHalfLaunched() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10), Self.slice(1, from: 10, to: 11)], cap: 4)
        _ = machine.start()
        let drained = machine.answered(Self.page(1, next: nil, voidedAt: []), now: Self.now)
        _ = machine.stored(try #require(Self.write(in: drained)), inserted: 0)

        let times = (1...1000).map { Self.origin + Int64($0) * Self.dayMillis / 1000 }
        let actions = machine.answered(Self.page(0, next: "t1", voidedAt: times), now: Self.now)
        let write = try #require(Self.write(in: actions))
        let after = machine.stored(write, inserted: 1000)

        var kept = Self.slice(0, from: 0, to: 5.5, token: "t1")
        kept.pagesDone = 1
        kept.rowsDone = 1000
        let added = VoidedSlice(
            number: 2, start: VoidedSlice.date(millis: Self.origin + 11 * Self.dayMillis / 2 + 1), end: Self.day(10))
        guard case .split(let splitKept, let splitAdded, let left, let allLeft) = after.first else {
            Issue.record("the slice should be split: \(after)")
            return
        }
        #expect(splitKept == kept && splitAdded == added)
        #expect(abs(left - 9) < 1e-6 && abs(allLeft - 9) < 1e-6)
        #expect(after.dropFirst().first == .launch(Call(slice: 2, start: added.start, end: added.end, token: nil)))
        #expect(machine.slices == [kept, machine.slices[1], added])
        #expect(machine.inFlight == [0, 2])
    }

    @Test func oneTokenChainAskedForIsNeverSplit() throws {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10), Self.slice(1, from: 10, to: 11)], cap: 1)
        _ = machine.start()
        let drained = machine.answered(Self.page(1, next: nil, voidedAt: []), now: Self.now)
        _ = machine.stored(try #require(Self.write(in: drained)), inserted: 0)
        let times = (1...1000).map { Self.origin + Int64($0) * Self.dayMillis / 1000 }
        let actions = machine.answered(Self.page(0, next: "t1", voidedAt: times), now: Self.now)
        let after = machine.stored(try #require(Self.write(in: actions)), inserted: 1000)
        #expect(after.count == 1, "only the progress line: \(after)")
        #expect(machine.slices.count == 2)
    }

    @Test func aDryRunCountsWhatWouldBeNewAndStoresNothing() {
        var machine = Self.machine([Self.slice(0, from: 0, to: 10)], dryRun: true)
        _ = machine.start()
        let answer = Self.page(0, next: nil, voidedAt: [Self.origin + 5 * Self.dayMillis])
        #expect(
            machine.answered(answer, now: Self.now) == [
                .countNew(answer.intake.records), .progress(fraction: 1),
            ])
        #expect(machine.checkpoint == Self.emptyCheckpoint)
    }
}
