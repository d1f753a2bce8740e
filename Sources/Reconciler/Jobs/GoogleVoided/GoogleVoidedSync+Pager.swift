import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

extension GoogleVoidedSync {
    /// Does what the ``PagerStateMachine`` decides for one window: its calls go into the task group of
    /// ``page(_:window:checkpoint:summary:pricing:in:)``, its pages into the ledger, its orders to the pricing. It
    /// feeds the machine the events those calls end with, and a stop request when one has come.
    struct Pager {
        let sync: GoogleVoidedSync
        let window: Window
        let environment: JobEnvironment
        let logger: Logger
        var machine: PagerStateMachine
        /// Raised by the first error to end the voided calls still waiting (at the quota gate) or travelling. A task
        /// group cancels all its children or none, and the Orders calls beside the voided ones must go on (their
        /// answers are stored), so each voided call races this signal in a small group of its own (see launch(_:in:)).
        let halt = ShutdownSignal()
        /// The pages whose orders are asked before they are stored.
        var ahead = AheadState()
        /// What an answered page brings to its store, by page number (``PagerStateMachine/PageWrite/page``): its
        /// batch made ready in its call's task, its orders priced ahead.
        var readied: [Int: (prepared: RefundLedger.Prepared?, priced: GoogleOrderStore.PricedAhead?)] = [:]

        init(
            sync: GoogleVoidedSync, window: Window, slices: [VoidedSlice], checkpoint: SyncCheckpoint,
            environment: JobEnvironment
        ) {
            self.sync = sync
            self.window = window
            self.environment = environment
            var logger = environment.logger
            logger[metadataKey: "job"] = "\(window.job)"
            self.logger = logger
            machine = PagerStateMachine(
                app: sync.app.id, windowEnd: window.end, slices: slices, checkpoint: checkpoint,
                sliceCap: sync.sliceCap, burst: sync.burst, dryRun: environment.dryRun)
        }

        /// One event from the group: an Orders answer is stored; a voided answer is counted and handed to the machine.
        mutating func handle(
            _ event: Event, summary: inout Summary, pricing: inout GoogleOrderAmounts.Pricing,
            group: inout ThrowingTaskGroup<Event, any Error>
        ) throws {
            switch event {
            case .orders(let orders):
                try priced(orders, pricing: &pricing)
            case .page(let answer):
                if case .success(let page) = answer.result { count(page, answer, summary: &summary) }
                try deliver(
                    answer, asking: try orderIdsAhead(answer, pricing: pricing), summary: &summary,
                    pricing: &pricing, group: &group)
            case .ahead(let answer):
                let (page, priced) = received(answer, pricing: &pricing)
                readied[answer.number] = (page.prepared, priced)
                noteStop()
                let actions = machine.ordersAnswered(
                    page: answer.number, slice: page.slice, records: page.intake.records)
                try perform(actions, summary: &summary, pricing: &pricing, group: &group)
            }
        }

        /// Hands a voided answer to the machine and does what it decides. A page whose orders are `asking` moves its
        /// slice on (the next page leaves now, whatever the pricing) and waits for them in a call of its own.
        private mutating func deliver(
            _ answer: Answer, asking: [String], summary: inout Summary, pricing: inout GoogleOrderAmounts.Pricing,
            group: inout ThrowingTaskGroup<Event, any Error>
        ) throws {
            noteStop()
            let actions = machine.answered(answer, now: environment.now(), waitsForOrders: !asking.isEmpty)
            let number = machine.lastPage
            if !asking.isEmpty, machine.waitsForOrders(page: number, slice: answer.slice) {
                askAhead(asking, for: answer, number: number, group: &group)
            } else if answer.prepared != nil {
                readied[number] = (answer.prepared, nil)
            }
            try perform(actions, summary: &summary, pricing: &pricing, group: &group)
        }

        /// The signal is polled, as between pages elsewhere: the calls waiting at the gate end there by themselves.
        private mutating func noteStop() {
            if environment.shutdown.isRequested { machine.stopRequested() }
        }

        /// Does `actions` in order; a stored page's own follow-ups (a split, the progress line, the slice's next page
        /// held) come after them.
        mutating func perform(
            _ actions: [PagerStateMachine.Action], summary: inout Summary, pricing: inout GoogleOrderAmounts.Pricing,
            group: inout ThrowingTaskGroup<Event, any Error>
        ) throws {
            var queue = actions[...]
            while let action = queue.popFirst() {
                switch action {
                case .launch(let call):
                    // A page whose orders will likely be asked ahead is made ready to write once priced, not twice.
                    launch(call, prepare: !mayAskAhead(pricing), in: &group)
                case .store(let write):
                    let brought = readied.removeValue(forKey: write.page)
                    let ahead = brought?.priced
                    let inserted = try store(write, prepared: brought?.prepared, priced: ahead, summary: &summary)
                    if let ahead { try storeRest(ahead, pricing: &pricing) }
                    noteStop()
                    queue += machine.stored(write, inserted: inserted)
                case .countNew(let rows):
                    let fresh = try sync.ledger.countNew(rows, on: environment.connection)
                    summary.inserted += fresh
                    environment.counters.add("would_insert", fresh)
                case .price(let orderIds):
                    let asked = ahead.asked
                    ahead.asked = []
                    try pricing.addRefunds(
                        asked.isEmpty ? orderIds : orderIds.filter { !asked.contains($0) }, on: environment.connection)
                case .restart(let slice, let gap):
                    try restart(slice, gap: gap, summary: &summary)
                case .split(let kept, let added, let pagesLeft, let allPagesLeft):
                    try split(kept, added, pagesLeft: pagesLeft, allPagesLeft: allPagesLeft)
                case .closeWindow(let checkpoint):
                    guard !environment.dryRun else { break }
                    let (job, app) = (window.job, sync.app.id)
                    // Together: slices forgotten with the window still open would have the next run page it again.
                    try environment.connection.transactionRetryingConflicts { connection in
                        try VoidedSlice.replace([], job: job, app: app, on: connection)
                        try checkpoint.save(on: connection)
                    }
                case .cancelCalls:
                    halt.request()
                case .progress(let fraction):
                    sync.showProgress(
                        summary, fraction: fraction, job: window.job, elapsed: window.started.duration(to: .now),
                        purpose: window.purpose, in: environment)
                }
            }
        }

        /// Starts the voided call as a child task of the paging's group.
        private func launch(
            _ call: PagerStateMachine.Call, prepare: Bool, in group: inout ThrowingTaskGroup<Event, any Error>
        ) {
            let (sync, halt, purpose, now, runId) = (sync, halt, window.purpose, environment.now, environment.runId)
            group.addTask {
                // The first error raises `halt`: the call is then cancelled wherever it waits. An answer that comes
                // anyway is still returned (and stored); the halt waiter ends when the call does.
                await withTaskGroup(of: Answer?.self) { race in
                    race.addTask {
                        await Self.call(call, sync: sync, purpose: purpose, runId: runId, prepare: prepare, now: now)
                    }
                    race.addTask {
                        await halt.stopped()
                        return nil
                    }
                    var answer = Answer(slice: call.slice, result: .failure(CancellationError()), seconds: 0)
                    for await next in race {
                        race.cancelAll()
                        if let next { answer = next }
                    }
                    return .page(answer)
                }
            }
        }

        /// One voided page, its intake mapped and made ready to write here (in the call's own task) while the page
        /// before is being stored.
        private static func call(
            _ call: PagerStateMachine.Call, sync: GoogleVoidedSync, purpose: CallPurpose, runId: Int64?,
            prepare: Bool, now: @Sendable () -> Date
        ) async -> Answer {
            let began = ContinuousClock.now
            let result: Result<VoidedPurchasesListResponse, any Error>
            do {
                result = .success(
                    try await sync.fetch(start: call.start, end: call.end, token: call.token, purpose: purpose))
            } catch {
                result = .failure(error)
            }
            var answer = Answer(slice: call.slice, result: result, seconds: began.duration(to: .now).seconds)
            if case .success(let page) = result {
                answer.intake = RefundRecord.intake(page, receivedAt: now())
                if prepare { answer.prepared = sync.ledger.prepare(answer.intake.records, runId: runId) }
            }
            return answer
        }

        /// Starts the Orders calls the pricing has ready (all it holds when `flush`), as children of the same group.
        /// Every stored page is priced, also those stored while the run stops (a stop request lets the queue of
        /// stored pages be asked, a few seconds at most); only what was never stored is left to the next run.
        func price(
            _ pricing: inout GoogleOrderAmounts.Pricing, flush: Bool, group: inout ThrowingTaskGroup<Event, any Error>
        ) {
            let (amounts, purpose) = (sync.orderAmounts, window.purpose)
            pricing.launch(flush: flush) { ids in
                group.addTask { .orders(await amounts.call(ids, purpose: purpose)) }
            }
        }

        /// Stores an Orders answer's amounts. The stop signal refusing the call at the gate (no store call after a
        /// signal) leaves what is not priced in the backlog for the next run; the pages keep landing.
        private func priced(
            _ orders: GoogleOrderAmounts.OrdersAnswer, pricing: inout GoogleOrderAmounts.Pricing
        ) throws {
            do {
                try pricing.handle(orders, in: environment)
            } catch let error as ReconcilerError where error == StoppableQuotaGate.stopped {
                pricing.dropQueued()
            }
        }

        /// After the last event: the first error, or a window left unfinished by a stop, or the slices' summary.
        func finish() throws {
            switch machine.finish() {
            case .failed(let error):
                throw error
            case .unfinished:
                try environment.checkShutdown()
                throw ReconcilerError(.temporary, "the window was left unfinished; run again to continue")
            case .drained(let slices, let typicalMillis):
                guard slices > 1 else { return }
                logger.info("\(slices) slices, typical call \(typicalMillis.map { "\($0) ms" } ?? "unmeasured")")
            }
        }
    }
}
