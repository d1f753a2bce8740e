import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

extension GoogleVoidedSync {
    /// The paging of one window's slices: which calls travel, and what each answer does to the slices, the
    /// checkpoint and the ledger. ``page(_:window:checkpoint:summary:pricing:in:)`` runs it on the events its calls
    /// send; every method handles one event or one step of it.
    struct Pager {
        let sync: GoogleVoidedSync
        let window: Window
        let environment: JobEnvironment
        let logger: Logger
        let sink: AsyncStream<Event>.Continuation
        var states: [SliceState]
        var calls: [Int: Task<Void, Never>] = [:]
        var orderCalls: [Task<Void, Never>] = []
        /// The first error: it stops the other slices and is thrown once every call has ended.
        var failure: (any Error)?
        /// Chains the window started with, and the splits made since (see wantsSplit).
        let startCount: Int
        var splits = 0
        var callTimes: [Double] = []

        init(
            sync: GoogleVoidedSync, window: Window, slices: [VoidedSlice], sink: AsyncStream<Event>.Continuation,
            environment: JobEnvironment
        ) {
            self.sync = sync
            self.window = window
            self.environment = environment
            var logger = environment.logger
            logger[metadataKey: "job"] = "\(window.job)"
            self.logger = logger
            self.sink = sink
            self.states = slices.map { SliceState($0) }
            self.startCount = slices.filter { !$0.drained }.count
        }

        var slices: [VoidedSlice] { states.map(\.slice) }

        /// Starts the call for the next page of the slice at `index`.
        mutating func launch(_ index: Int) {
            let slice = states[index].slice
            let (from, to, token) = (slice.start, slice.end, slice.token)
            let (sync, sink, purpose, now) = (sync, sink, window.purpose, environment.now)
            calls[index] = Task {
                let began = ContinuousClock.now
                let result: Result<VoidedPurchasesListResponse, any Error>
                do {
                    result = .success(try await sync.fetch(start: from, end: to, token: token, purpose: purpose))
                } catch {
                    result = .failure(error)
                }
                var answer = Answer(slice: index, result: result, seconds: began.duration(to: .now).seconds)
                if case .success(let page) = result {
                    answer.intake = RefundRecord.intake(page, receivedAt: now())
                }
                sink.yield(.page(answer))
            }
        }

        /// Starts the Orders calls the pricing has ready (all it holds when `flush`). Every stored page is priced,
        /// also those stored while the run stops (a stop request lets the queue of stored pages be asked, a few
        /// seconds at most); only what was never stored is left to the next run.
        mutating func price(_ pricing: inout GoogleOrderAmounts.Pricing, flush: Bool) {
            let (amounts, sink, purpose) = (sync.orderAmounts, sink, window.purpose)
            var launched: [Task<Void, Never>] = []
            pricing.launch(flush: flush) { ids in
                launched.append(Task { sink.yield(.orders(await amounts.call(ids, purpose: purpose))) })
            }
            orderCalls += launched
        }

        /// Stores an Orders answer's amounts. The stop signal refusing the call at the gate (no store call after a
        /// signal) leaves what is not priced in the backlog for the next run; the pages keep landing.
        func priced(_ orders: GoogleOrderAmounts.OrdersAnswer, pricing: inout GoogleOrderAmounts.Pricing) throws {
            do {
                try pricing.handle(orders, in: environment)
            } catch let error as ReconcilerError where error == StoppableQuotaGate.stopped {
                pricing.dropQueued()
            }
        }

        /// The first error stops the other slices: calls still waiting are cancelled, answers that come anyway are
        /// stored.
        mutating func stop(_ error: any Error) {
            guard failure == nil else { return }
            failure = error
            for call in calls.values { call.cancel() }
        }

        func cancelAll() {
            for call in calls.values { call.cancel() }
            for call in orderCalls { call.cancel() }
        }

        /// A voided page answered or failed.
        mutating func answered(
            _ answer: Answer, checkpoint: inout SyncCheckpoint, summary: inout Summary,
            pricing: inout GoogleOrderAmounts.Pricing
        ) throws {
            calls[answer.slice] = nil
            switch answer.result {
            case .failure(let error):
                try failed(answer.slice, error, checkpoint: &checkpoint, summary: &summary)
            case .success(let page):
                try received(page, answer, checkpoint: &checkpoint, summary: &summary, pricing: &pricing)
            }
        }

        /// A refused page token restarts its slice once; any other error stops the window.
        private mutating func failed(
            _ index: Int, _ error: any Error, checkpoint: inout SyncCheckpoint, summary: inout Summary
        ) throws {
            if failure == nil, let error = error as? PlayAPIError, states[index].slice.token != nil,
                error.code == .badRequest, !states[index].restarted
            {
                states[index].restarted = true
                states[index].chain = nil
                try sync.restart(
                    &states[index].slice, window: window, checkpoint: &checkpoint, summary: &summary, logger: logger,
                    in: environment)
                if !environment.shutdown.isRequested { launch(index) }
            } else if !(error is CancellationError) {
                stop(error)
            }
        }

        /// A page: its slice moves on (its next page launched at once, travelling while this one is stored), the
        /// page is stored with the checkpoint, its refunds queued for pricing, and the slice perhaps split.
        private mutating func received(
            _ page: VoidedPurchasesListResponse, _ answer: Answer, checkpoint: inout SyncCheckpoint,
            summary: inout Summary, pricing: inout GoogleOrderAmounts.Pricing
        ) throws {
            let index = answer.slice
            count(page, answer, summary: &summary)
            let rows = answer.intake.records
            guard advance(index, page: page, rows: rows) else { return }
            if states[index].slice.token != nil, failure == nil, !environment.shutdown.isRequested { launch(index) }
            if environment.dryRun {
                let fresh = try sync.ledger.countNew(rows, on: environment.connection)
                summary.inserted += fresh
                environment.counters.add("would_insert", fresh)
            } else {
                try store(answer.intake, of: index, checkpoint: &checkpoint, summary: &summary)
                // Queued for Orders calls that travel while the next pages come (see GoogleOrderAmounts+Pricing).
                try pricing.addRefunds(rows.map(\.orderId), on: environment.connection)
                states[index].track(rows)
                try splitIfAlone(index, after: rows, stored: summary.pages)
            }
            states[index].reach(rows.last)
            sync.showProgress(
                summary, fraction: GoogleVoidedSync.fraction(slices, reached: states.map(\.reached)),
                job: window.job, elapsed: window.started.duration(to: .now), purpose: window.purpose, in: environment)
        }

        private mutating func count(_ page: VoidedPurchasesListResponse, _ answer: Answer, summary: inout Summary) {
            logger.debug(
                "voided page answered",
                metadata: [
                    "slice": "\(states[answer.slice].slice.number)", "rows": "\(page.voidedPurchases.count)",
                    "ms": "\(Int((answer.seconds * 1000).rounded()))", "in_flight": "\(calls.count)",
                ])
            callTimes.append(answer.seconds)
            summary.pages += 1
            summary.rows += page.voidedPurchases.count
            summary.quarantined += answer.intake.quarantined.count
            environment.counters.add("pages")
            environment.counters.add("rows_fetched", page.voidedPurchases.count)
            environment.counters.add("merged_repeats", answer.intake.merged)
        }

        /// Moves the slice past the page: its next token, or drained. False when the chain is refused (a circle, too
        /// long): the page is not stored, its slice keeps the token it was asked with, and the others stop.
        private mutating func advance(_ index: Int, page: VoidedPurchasesListResponse, rows: [RefundRecord]) -> Bool {
            var slice = states[index].slice
            // A slice split in two (see split(_:)) keeps its token, which reads on past its new end: a row voided
            // after that end was recorded after it too, and every row the slice must hold came before it (the list
            // is oldest first, and a void is recorded when or after it happens). An hour's margin keeps a row whose
            // void time runs ahead of Google's recording clock from ending the chain early; it costs at most the
            // rows of that hour, read twice and stored once.
            let passedEnd = rows.contains { $0.refundedAt > slice.end.addingTimeInterval(3600) }
            var chain =
                states[index].chain
                ?? PageChain(
                    app: sync.app.id, api: .googleVoidedPurchases, name: "slice \(slice.number)",
                    startingAt: slice.token, maximumPages: GoogleVoidedSync.maximumChainPages)
            let next: String?
            do {
                next = try chain.follow(
                    passedEnd ? nil : page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 },
                    rows: page.voidedPurchases.count)
            } catch {
                stop(error)
                return false
            }
            slice.token = next
            slice.pagesDone += 1
            slice.rowsDone += Int64(rows.count)
            slice.drained = next == nil
            states[index].slice = slice
            states[index].chain = chain
            return true
        }

        /// Stores the page with the slice's next token and the window's checkpoint, in one transaction (the window
        /// closes with its last page).
        private mutating func store(
            _ intake: (records: [RefundRecord], quarantined: [QuarantinedRow], merged: Int), of index: Int,
            checkpoint: inout SyncCheckpoint, summary: inout Summary
        ) throws {
            let rows = intake.records
            checkpoint.callMillis = GoogleVoidedSync.typicalMillis(callTimes)
            checkpoint.pagesDone += 1
            checkpoint.rowsDone += Int64(rows.count)
            let snapshot = slices
            let (slice, expectNew) = (states[index].slice, states[index].expectNew)
            let allDrained = snapshot.allSatisfy(\.drained)
            let (sync, window, environment, logger) = (sync, window, environment, logger)
            let counts = try environment.connection.transactionRetryingConflicts { connection in
                let counts = try sync.ledger.write(
                    rows, quarantined: intake.quarantined, job: .googleVoided, runId: environment.runId,
                    expectNew: expectNew, logger: logger, counters: environment.counters, on: connection)
                if allDrained {
                    try sync.finishWindow(
                        snapshot, window: window, checkpoint: &checkpoint, on: connection, dryRun: false)
                } else {
                    try slice.save(job: window.job, app: sync.app.id, on: connection)
                    if let drainedUpTo = GoogleVoidedSync.drainedPrefixEnd(snapshot) {
                        checkpoint.highWater = max(drainedUpTo, checkpoint.highWater ?? drainedUpTo)
                    }
                    try checkpoint.save(on: connection)
                }
                return counts
            }
            states[index].expectNew = counts.0 == rows.count
            summary.inserted += counts.0
            summary.updated += counts.1
            environment.counters.add("inserted", counts.0)
            environment.counters.add("updated", counts.1)
        }

        /// A chain that would page alone (or nearly) at the end has its remaining range halved, the second half paged
        /// by a chain of its own, so the last quota windows are not spent waiting for one chain's pages one after the
        /// other. `sync.googleSlices: 1` asks for one token chain: it is never split.
        private mutating func splitIfAlone(_ index: Int, after rows: [RefundRecord], stored: Int) throws {
            let left = states.map(\.pagesLeft)
            let number = slices.map(\.number).max()! + 1
            guard failure == nil, !environment.shutdown.isRequested, sync.sliceCap > 1,
                GoogleVoidedSync.wantsSplit(
                    left[index], live: left.filter { $0 > 0 }, traveling: calls.count, startCount: startCount,
                    splits: splits, stored: stored, burst: sync.burst),
                let piece = try sync.split(
                    &states[index].slice, after: rows, number: number, job: window.job, on: environment.connection)
            else { return }
            splits += 1
            environment.counters.add("slice_splits")
            logger.debug(
                "slice split",
                metadata: [
                    "slice": "\(states[index].slice.number)", "new_slice": "\(piece.number)",
                    "pages_left": "\(String(format: "%.1f", left[index]))",
                    "all_pages_left": "\(String(format: "%.1f", left.reduce(0, +)))", "in_flight": "\(calls.count)",
                ])
            states.append(SliceState(piece, expectNew: true, density: states[index].density))
            launch(states.count - 1)
        }

        /// After the last event: the first error, or a window left unfinished by a stop, or the slices' summary.
        func finish() throws {
            if let failure { throw failure }
            if !slices.allSatisfy(\.drained) {
                try environment.checkShutdown()
                throw ReconcilerError(.temporary, "the window was left unfinished; run again to continue")
            }
            if states.count > 1 {
                let typical = GoogleVoidedSync.typicalMillis(callTimes).map { "\($0) ms" } ?? "unmeasured"
                logger.info("\(states.count) slices, typical call \(typical)")
            }
        }
    }
}
