import Foundation
import Ledger
import PlayDeveloperAPI

extension GoogleVoidedSync {
    /// The decisions of paging one window's slices, apart from their I/O so they can be tested alone: which slice's
    /// call leaves, what a page does to its slice's token chain and to the checkpoint, when a slice is split, when the
    /// first error stops the others, and when the window is done. Each method takes one event and returns what must
    /// be done, in order; clock readings come in with the events. It is the paging half of the
    /// ``GoogleIntakeMachine``, which owns it and decides how each page's orders are asked.
    struct PagerStateMachine {
        let app: String
        let windowEnd: Date
        /// `sync.googleSlices`, and calls the shortest quota window allows at once (see splitIfAlone).
        let sliceCap: Int
        let burst: Int?
        let dryRun: Bool
        private(set) var states: [SliceState]
        private(set) var checkpoint: SyncCheckpoint
        /// The most pages of one slice held at once (answered, not yet stored): pages waiting for their orders do not
        /// hold back the next call, up to this many, so that a slow Orders API cannot fill the memory.
        static let heldPerSlice = 3
        /// Slices whose call travels (never two calls for one slice).
        private(set) var inFlight: Set<Int> = []
        /// The first error: it stops the other slices and ends the paging once every call has ended.
        private var failure: (any Error)?
        private var stopping = false
        /// Chains the window started with, and the splits made since (see splitIfAlone).
        private let startCount: Int
        private var splits = 0
        private var callTimes: [Double] = []
        private var pagesAnswered = 0

        init(
            app: String, windowEnd: Date, slices: [VoidedSlice], checkpoint: SyncCheckpoint, sliceCap: Int,
            burst: Int?, dryRun: Bool
        ) {
            self.app = app
            self.windowEnd = windowEnd
            self.sliceCap = sliceCap
            self.burst = burst
            self.dryRun = dryRun
            self.states = slices.map { SliceState($0, app: app) }
            self.checkpoint = checkpoint
            self.startCount = slices.filter { !$0.drained }.count
        }

        var slices: [VoidedSlice] { states.map(\.slice) }
        /// Whether a voided call still travels or an answered page waits for its orders: the paging ends when
        /// neither (and the pricing is idle).
        var isPaging: Bool { !inFlight.isEmpty || states.contains { !$0.held.isEmpty } }
        /// Whether no voided call travels and none will leave again (every slice drained, or an error or a stop
        /// ended the calls): only pages already answered are left to store.
        var callsEnded: Bool {
            inFlight.isEmpty && (failure != nil || stopping || states.allSatisfy(\.slice.drained))
        }
        /// The number of the page answered last (``PageWrite/page`` of its store).
        var lastPage: Int { pagesAnswered }

        /// Whether the page numbered `page` of the slice at `index` is held for its orders.
        func waitsForOrders(page: Int, slice index: Int) -> Bool {
            states[index].held.contains { $0.page == page && $0.records == nil }
        }

        /// Every undrained slice's call leaves at once; a window whose slices are all drained but which was not
        /// closed (cannot happen after a committed last page) is closed.
        mutating func start() -> [Action] {
            let open = states.indices.filter { !states[$0].slice.drained }
            guard open.isEmpty else { return open.map { launch($0) } }
            GoogleVoidedSync.close(&checkpoint, end: windowEnd)
            return [.closeWindow(checkpoint)]
        }

        /// A stop was requested (a signal): no call leaves after it. The calls waiting at the quota gate end there,
        /// and pages already answered are still stored, so nothing is cancelled here.
        mutating func stopRequested() {
            stopping = true
        }

        /// A voided call ended; `now` dates a restarted slice against what Google keeps. A page that
        /// `waitsForOrders` (its orders asked before it is stored) moves its slice on at once, its next page leaving
        /// now, and is stored when ``ordersAnswered(page:slice:records:)`` brings its rows.
        mutating func answered(_ answer: Answer, now: Date, waitsForOrders: Bool = false) -> [Action] {
            inFlight.remove(answer.slice)
            switch answer.result {
            case .failure(let error):
                return failed(answer.slice, error, now: now)
            case .success(let page):
                return received(page, answer, waitsForOrders: waitsForOrders)
            }
        }

        /// The orders of a page held for them are answered: `records`, the page's rows priced, are stored once the
        /// pages of its slice answered before it are (a page and its slice row commit in the slice's page order).
        mutating func ordersAnswered(page: Int, slice index: Int, records: [RefundRecord]) -> [Action] {
            guard let at = states[index].held.firstIndex(where: { $0.page == page }) else { return [] }
            states[index].held[at].records = records
            return release(index)
        }

        private mutating func launch(_ index: Int) -> Action {
            inFlight.insert(index)
            let slice = states[index].slice
            return .launch(Call(slice: index, start: slice.start, end: slice.end, token: slice.token))
        }

        private mutating func stop(_ error: any Error) -> [Action] {
            guard failure == nil else { return [] }
            failure = error
            return [.cancelCalls]
        }

        /// A refused page token (expired, unknown) restarts its slice once from its start: upserts make reading it
        /// again safe, at the cost of its pages already read. A slice that now starts before what Google keeps
        /// starts at the oldest time it keeps instead (Google refuses such a startTime), the part before being a gap.
        /// A second refusal, or any other error, stops the window; a cancelled call is the stop's own doing.
        private mutating func failed(_ index: Int, _ error: any Error, now: Date) -> [Action] {
            guard failure == nil, let refused = error as? PlayAPIError, refused.code == .badRequest,
                states[index].chain.restart(refusing: states[index].slice.token)
            else { return error is CancellationError ? [] : stop(error) }
            var slice = states[index].slice
            slice.token = nil
            let gap = slice.clamp(to: VoidedWindowPlanner.oldestStart(now: now))
            states[index].slice = slice
            // Pages held from before the refused token keep their rows; their slice row is the one restarted.
            states[index].stored = slice
            for page in states[index].held.indices { states[index].held[page].sliceRow = slice }
            return [.restart(slice, gap: gap)] + (stopping ? [] : [launch(index)])
        }

        /// A page: its slice's next page leaves first (travelling while this one is stored or priced), then the page
        /// is stored with the checkpoint and its orders queued for pricing, after the slice's pages before it and
        /// once its own orders are answered when it waits for them (a dry run only counts what would be new).
        private mutating func received(_ page: VoidedPurchasesListResponse, _ answer: Answer, waitsForOrders: Bool)
            -> [Action]
        {
            let index = answer.slice
            let rows = answer.intake.records
            callTimes.append(answer.seconds)
            pagesAnswered += 1
            do {
                try advance(index, page: page, rows: rows)
            } catch {
                return stop(error)
            }
            var actions: [Action] = []
            if mayLaunch(index, holding: 1) { actions.append(launch(index)) }
            guard !dryRun else {
                states[index].reach(rows.last)
                return actions + [.countNew(rows), .progress(fraction: fraction)]
            }
            states[index].held.append(
                HeldPage(
                    page: pagesAnswered, sliceRow: states[index].slice, records: waitsForOrders ? nil : rows,
                    quarantined: answer.intake.quarantined))
            return actions + release(index)
        }

        /// The oldest held page of the slice, when it may be stored and no page of the slice is being stored: its
        /// store, then its orders queued for Orders calls that travel while the next pages come (see
        /// GoogleOrderAmounts+Pricing).
        private mutating func release(_ index: Int) -> [Action] {
            guard !states[index].storing, let head = states[index].held.first, let records = head.records else {
                return []
            }
            states[index].held.removeFirst()
            states[index].storing = true
            states[index].stored = head.sliceRow
            let write = write(records, head.quarantined, page: head.page, of: index)
            // A slice that stopped at `heldPerSlice` pages goes on now.
            let resumed = mayLaunch(index, holding: 0) && !inFlight.contains(index) ? [launch(index)] : []
            return resumed + [.store(write), .price(orderIds: records.map(\.orderId))]
        }

        /// Whether the slice's next page may leave with `holding` more pages held: not after an error or a stop
        /// request, nor while `heldPerSlice` pages wait (their rows stay in memory until stored).
        private func mayLaunch(_ index: Int, holding: Int) -> Bool {
            states[index].slice.token != nil && failure == nil && !stopping
                && states[index].held.count + holding < Self.heldPerSlice
        }

        /// The page of `write` was stored, `inserted` of its rows new: its slice learns its density and is perhaps
        /// split.
        mutating func stored(_ write: PageWrite, inserted: Int) -> [Action] {
            let (index, rows) = (write.slice, write.records)
            states[index].storing = false
            states[index].expectNew = inserted == rows.count
            states[index].track(rows)
            var actions = splitIfAlone(index)
            states[index].reach(rows.last)
            actions.append(.progress(fraction: fraction))
            return actions + release(index)
        }

        /// After the last event (no call travelling).
        func finish() -> Outcome {
            if let failure { return .failed(failure) }
            if !slices.allSatisfy(\.drained) { return .unfinished }
            return .drained(slices: states.count, typicalMillis: GoogleVoidedSync.typicalMillis(callTimes))
        }

        private var fraction: Double? {
            GoogleVoidedSync.fraction(slices, reached: states.map(\.reached))
        }
    }
}

extension GoogleVoidedSync.PagerStateMachine {
    /// Moves the slice past the page: its next token, or drained. Throws when the chain is refused (a circle, too
    /// long): the page is then not stored and its slice keeps the token it was asked with.
    private mutating func advance(_ index: Int, page: VoidedPurchasesListResponse, rows: [RefundRecord]) throws {
        var slice = states[index].slice
        // A slice split in two (see splitIfAlone) keeps its token, which reads on past its new end: a row voided
        // after that end was recorded after it too, and every row the slice must hold came before it (the list is
        // oldest first, and a void is recorded when or after it happens). An hour's margin keeps a row whose void
        // time runs ahead of Google's recording clock from ending the chain early; it costs at most the rows of that
        // hour, read twice and stored once.
        let passedEnd = passesEnd(rows, of: index)
        let next = try states[index].chain.follow(
            passedEnd ? nil : page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 }, rows: page.voidedPurchases.count)
        slice.token = next
        slice.pagesDone += 1
        slice.rowsDone += Int64(rows.count)
        slice.drained = next == nil
        states[index].slice = slice
    }

    /// Whether the page `answer` brings is the last of its slice: no next page, or rows past the slice's end.
    func endsSlice(_ answer: GoogleVoidedSync.Answer) -> Bool {
        guard case .success(let page) = answer.result else { return false }
        return page.nextPageToken == nil || passesEnd(answer.intake.records, of: answer.slice)
    }

    /// Whether a row lies past the slice's end and its hour of margin (see advance(_:page:rows:)).
    private func passesEnd(_ rows: [RefundRecord], of index: Int) -> Bool {
        let end = states[index].slice.end.addingTimeInterval(3600)
        return rows.contains { $0.refundedAt > end }
    }

    /// The page with the slice's next token and the window's checkpoint; the window closes with its last page.
    private mutating func write(
        _ records: [RefundRecord], _ quarantined: [QuarantinedRow], page: Int, of index: Int
    ) -> PageWrite {
        checkpoint.callMillis = GoogleVoidedSync.typicalMillis(callTimes)
        checkpoint.pagesDone += 1
        checkpoint.rowsDone += Int64(records.count)
        // The slices as stored: a slice drained by a page still held does not close the window or move the mark.
        let snapshot = states.map(\.stored)
        var saved: VoidedSlice? = states[index].stored
        if snapshot.allSatisfy(\.drained) {
            GoogleVoidedSync.close(&checkpoint, end: windowEnd)
            saved = nil
        } else if let drainedUpTo = GoogleVoidedSync.drainedPrefixEnd(snapshot) {
            checkpoint.highWater = max(drainedUpTo, checkpoint.highWater ?? drainedUpTo)
        }
        return PageWrite(
            slice: index, records: records, quarantined: quarantined,
            expectNew: states[index].expectNew, checkpoint: checkpoint, sliceRow: saved, page: page)
    }

    /// A chain that would page alone (or nearly) at the end has its remaining range cut in parts (see
    /// ``GoogleVoidedSync/plannedCuts(_:after:_:)``), each part after the first paged by a chain of its own, so the
    /// last quota windows are not spent waiting for one chain's pages one after the other. The parts are saved from
    /// the last one back, so every saved state covers the whole range. `sync.googleSlices: 1` asks for one token
    /// chain: it is never split.
    private mutating func splitIfAlone(_ index: Int) -> [Action] {
        guard failure == nil, !stopping, sliceCap > 1 else { return [] }
        let context = GoogleVoidedSync.SplitContext(
            app: app, traveling: inFlight.count, startCount: startCount, splits: splits, stored: pagesAnswered,
            burst: burst)
        var actions: [Action] = []
        for cut in GoogleVoidedSync.plannedCuts(states, after: index, context) {
            splits += cut.added.count
            var covering = states[cut.slice].slice
            for part in cut.added.reversed() {
                covering.end = VoidedSlice.date(millis: GoogleVoidedSync.millis(part.start) - 1)
                actions.append(
                    .split(kept: covering, added: part, pagesLeft: cut.pagesLeft, allPagesLeft: cut.allPagesLeft))
            }
            states[cut.slice].slice = cut.kept
            states[cut.slice].stored = cut.kept
            for part in cut.added {
                states.append(
                    GoogleVoidedSync.SliceState(
                        part, app: app, expectNew: true, density: states[cut.slice].density))
                actions.append(launch(states.count - 1))
            }
        }
        return actions
    }
}
