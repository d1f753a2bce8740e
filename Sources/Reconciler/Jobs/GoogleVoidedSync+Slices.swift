import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// Paging a window as several time slices at once.
///
/// Pages of one token chain can only be asked for one after the other, so a single chain makes at most one call per
/// answer time: about 0.65 calls/s at 1.5 s answers, where 30 per 30 s allows 1/s and a burst of 30. The window is
/// therefore cut into slices by recorded time, each paged by its own chain, all calls passing the shared quota gate:
/// with enough slices in flight the gate, not the answer time, sets the pace.
///
/// Exactness: each page, its slice's next token and the window's checkpoint commit in one transaction (pages are
/// stored one at a time on the job's connection, whichever slice they come from). The high-water mark moves only
/// over slices fully drained from the window's start on; a crash resumes every unfinished slice from its last stored
/// page, costing at most the call each slice had in flight. A quota answer, an outage or a failed store in one slice
/// stops the others: no new call starts, pages already answered are stored, and the error surfaces (exit 75 for
/// quota and outages), with every stored page kept.
extension GoogleVoidedSync {
    /// What paging a window needs besides its slices.
    struct Window {
        var job: String
        var purpose: CallPurpose
        var start: Date
        var end: Date
        var started: ContinuousClock.Instant
    }

    /// The most pages one slice's chain may take: a day's quota of voided calls (6000). No window holds more pages
    /// than a day lets a chain read; a store still naming new tokens past that pages in a circle.
    static let maximumChainPages = 6000

    /// How many slices a new window is cut into: enough that a burst of the quota window goes out within about 3 s
    /// at the measured call time (or, with the limits lifted, that calls keep pace with storing a page, about 50 ms),
    /// at most `cap`; one when the call time is unknown or short.
    static func sliceCount(callSeconds: Double?, burst: Int?, cap: Int) -> Int {
        guard let callSeconds, callSeconds > 0, cap > 1 else { return 1 }
        let pace = max(0.05, 3.0 / Double(max(1, burst ?? .max)))
        return min(cap, max(1, Int((callSeconds / pace).rounded(.up))))
    }

    private struct Answer: Sendable {
        var slice: Int
        var result: Result<VoidedPurchasesListResponse, any Error>
        var seconds: Double
        /// The page's rows as the ledger takes them (``RefundRecord/intake(_:receivedAt:)``), mapped in the call's own task
        /// while the page before is being stored.
        var intake: (records: [RefundRecord], quarantined: [QuarantinedRow], merged: Int) = ([], [], 0)
    }

    /// What the paging waits for: a voided page, or an Orders answer for the amounts of pages already stored.
    private enum Event: Sendable {
        case page(Answer)
        case orders(GoogleOrderAmounts.OrdersAnswer)
    }

    /// Pages every unfinished slice until all are drained, or until a stop or an error, and prices what it stored
    /// meanwhile (`pricing`: Orders calls travel beside the pages, their answers are stored between two pages; every
    /// call launched is answered and stored before this returns).
    func page(
        _ slices: inout [VoidedSlice], window: Window, checkpoint: inout SyncCheckpoint, summary: inout Summary,
        pricing: inout GoogleOrderAmounts.Pricing, in environment: JobEnvironment
    ) async throws {
        var logger = environment.logger
        logger[metadataKey: "job"] = "\(window.job)"
        let connection = environment.connection
        let (events, sink) = AsyncStream<Event>.makeStream()
        var calls: [Int: Task<Void, Never>] = [:]
        var orderCalls: [Task<Void, Never>] = []
        defer {
            for call in calls.values { call.cancel() }
            for call in orderCalls { call.cancel() }
            sink.finish()
        }
        let amounts = orderAmounts
        // Every stored page is priced, also those stored while the run stops (a stop request lets the queue of
        // stored pages be asked, a few seconds at most); only what was never stored is left to the next run.
        func price(flush: Bool) {
            pricing.launch(flush: flush) { ids in
                orderCalls.append(
                    Task { [purpose = window.purpose] in
                        sink.yield(.orders(await amounts.call(ids, purpose: purpose)))
                    })
            }
        }
        func launch(_ index: Int) {
            let (from, to, token, purpose) = (
                slices[index].start, slices[index].end, slices[index].token, window.purpose
            )
            let now = environment.now
            calls[index] = Task { [self] in
                let began = ContinuousClock.now
                let result: Result<VoidedPurchasesListResponse, any Error>
                do {
                    result = .success(try await fetch(start: from, end: to, token: token, purpose: purpose))
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
        // A stop requested before the first call ends the run at once.
        try environment.checkShutdown()
        for index in slices.indices where !slices[index].drained { launch(index) }
        var failure: (any Error)?
        var restarted: Set<Int> = []
        var expectNew = Array(repeating: false, count: slices.count)
        // Chains the window started with, and the splits made since (see wantsSplit).
        let startCount = slices.filter { !$0.drained }.count
        var splits = 0
        var reached = slices.map { $0.drained ? 1.0 : 0.0 }
        // Per slice: the latest void time seen, and rows per millisecond of its span so far (a slice split off
        // takes its parent's until its own first page): its pages left are estimated from them.
        var lastSeen: [Int64?] = Array(repeating: nil, count: slices.count)
        var density: [Double?] = Array(repeating: nil, count: slices.count)
        var callTimes: [Double] = []
        // Each slice's token chain, checked for a store paging in a circle (see PageChain).
        var chains: [Int: PageChain] = [:]
        if calls.isEmpty {
            // Every slice was drained but the window not closed (cannot happen after a committed last page): close it.
            try finishWindow(
                slices, window: window, checkpoint: &checkpoint, on: connection, dryRun: environment.dryRun)
        }
        var iterator = events.makeAsyncIterator()
        while !calls.isEmpty || !pricing.isIdle, let event = await iterator.next() {
            defer { price(flush: calls.isEmpty) }
            let answer: Answer
            switch event {
            case .orders(let orders):
                do {
                    try pricing.handle(orders, in: environment)
                } catch let error as ReconcilerError where error == StoppableQuotaGate.stopped {
                    // The stop signal refused this Orders call at the gate (no store call after a signal): the pages
                    // keep landing, and what is not priced waits in the backlog for the next run.
                    pricing.dropQueued()
                }
                continue
            case .page(let page):
                answer = page
            }
            let index = answer.slice
            calls[index] = nil
            switch answer.result {
            case .failure(let error):
                if failure == nil, let error = error as? PlayAPIError, slices[index].token != nil,
                    error.code == .badRequest, !restarted.contains(index)
                {
                    restarted.insert(index)
                    chains[index] = nil
                    try restart(
                        &slices[index], window: window, checkpoint: &checkpoint, summary: &summary, logger: logger,
                        in: environment)
                    if !environment.shutdown.isRequested { launch(index) }
                } else if failure == nil, !(error is CancellationError) {
                    // The first error stops the other slices: calls still waiting are cancelled, answers that come
                    // anyway are stored.
                    failure = error
                    for call in calls.values { call.cancel() }
                }
            case .success(let page):
                logger.debug(
                    "voided page answered",
                    metadata: [
                        "slice": "\(slices[index].number)", "rows": "\(page.voidedPurchases.count)",
                        "ms": "\(Int((answer.seconds * 1000).rounded()))", "in_flight": "\(calls.count)",
                    ])
                callTimes.append(answer.seconds)
                summary.pages += 1
                summary.rows += page.voidedPurchases.count
                environment.counters.add("pages")
                environment.counters.add("rows_fetched", page.voidedPurchases.count)
                let (rows, quarantined, merged) = answer.intake
                environment.counters.add("merged_repeats", merged)
                summary.quarantined += quarantined.count
                // A slice split in two (see split(_:)) keeps its token, which reads on past its new end: a row voided
                // after that end was recorded after it too, and every row the slice must hold came before it (the
                // list is oldest first, and a void is recorded when or after it happens). An hour's margin keeps a
                // row whose void time runs ahead of Google's recording clock from ending the chain early; it costs
                // at most the rows of that hour, read twice and stored once.
                let passedEnd = rows.contains { $0.refundedAt > slices[index].end.addingTimeInterval(3600) }
                var chain =
                    chains[index]
                    ?? PageChain(
                        app: app.id, api: .googleVoidedPurchases, name: "slice \(slices[index].number)",
                        startingAt: slices[index].token, maximumPages: Self.maximumChainPages)
                let next: String?
                do {
                    next = try chain.follow(
                        passedEnd ? nil : page.nextPageToken.flatMap { $0.isEmpty ? nil : $0 },
                        rows: page.voidedPurchases.count)
                    chains[index] = chain
                } catch {
                    // The page is not stored (its slice keeps the token it was asked with); the others stop.
                    if failure == nil {
                        failure = error
                        for call in calls.values { call.cancel() }
                    }
                    continue
                }
                slices[index].token = next
                slices[index].pagesDone += 1
                slices[index].rowsDone += Int64(rows.count)
                slices[index].drained = next == nil
                if next != nil, failure == nil, !environment.shutdown.isRequested {
                    // The slice's next page travels while this one is stored (see GoogleVoidedSync.run).
                    launch(index)
                }
                if environment.dryRun {
                    let fresh = try ledger.countNew(rows, on: connection)
                    summary.inserted += fresh
                    environment.counters.add("would_insert", fresh)
                } else {
                    checkpoint.callMillis = Self.typicalMillis(callTimes)
                    checkpoint.pagesDone += 1
                    checkpoint.rowsDone += Int64(rows.count)
                    let (slice, allDrained) = (slices[index], slices.allSatisfy(\.drained))
                    let snapshot = slices
                    let counts = try connection.transactionRetryingConflicts { connection in
                        let counts = try ledger.write(
                            rows, quarantined: quarantined, job: .googleVoided, runId: environment.runId,
                            expectNew: expectNew[index], logger: logger, counters: environment.counters,
                            on: connection)
                        if allDrained {
                            try finishWindow(
                                snapshot, window: window, checkpoint: &checkpoint, on: connection, dryRun: false)
                        } else {
                            try slice.save(job: window.job, app: app.id, on: connection)
                            if let drainedUpTo = Self.drainedPrefixEnd(snapshot) {
                                checkpoint.highWater = max(drainedUpTo, checkpoint.highWater ?? drainedUpTo)
                            }
                            try checkpoint.save(on: connection)
                        }
                        return counts
                    }
                    expectNew[index] = counts.0 == rows.count
                    summary.inserted += counts.0
                    summary.updated += counts.1
                    environment.counters.add("inserted", counts.0)
                    environment.counters.add("updated", counts.1)
                    // The amounts of the page's refunds, once the page and its checkpoint committed: queued for
                    // Orders calls that travel while the next pages come (see GoogleOrderAmounts+Pricing); what is
                    // not priced by the end (the Orders API stopped, a stop request) waits in the backlog for a
                    // later run.
                    try pricing.addRefunds(rows.map(\.orderId), on: connection)
                    if let last = rows.map({ Self.millis($0.refundedAt) }).max() {
                        lastSeen[index] = max(last, lastSeen[index] ?? last)
                    }
                    if let last = lastSeen[index], last > Self.millis(slices[index].start) {
                        density[index] =
                            Double(slices[index].rowsDone) / Double(last - Self.millis(slices[index].start))
                    }
                    let left = slices.indices.map {
                        Self.pagesLeft(slices[$0], lastSeen: lastSeen[$0], density: density[$0])
                    }
                    // `sync.googleSlices: 1` asks for one token chain: it is never split.
                    if failure == nil, !environment.shutdown.isRequested, sliceCap > 1,
                        Self.wantsSplit(
                            left[index], live: left.filter { $0 > 0 }, traveling: calls.count,
                            startCount: startCount, splits: splits, stored: summary.pages, burst: burst),
                        let piece = try split(
                            &slices[index], after: rows, number: slices.map(\.number).max()! + 1,
                            job: window.job, on: connection)
                    {
                        // This chain would page alone (or nearly) at the end: its remaining range is halved and the
                        // second half paged by a chain of its own, so the last quota windows are not spent waiting
                        // for one chain's pages one after the other.
                        splits += 1
                        environment.counters.add("slice_splits")
                        logger.debug(
                            "slice split",
                            metadata: [
                                "slice": "\(slices[index].number)", "new_slice": "\(piece.number)",
                                "pages_left": "\(String(format: "%.1f", left[index]))",
                                "all_pages_left": "\(String(format: "%.1f", left.reduce(0, +)))",
                                "in_flight": "\(calls.count)",
                            ])
                        slices.append(piece)
                        expectNew.append(true)
                        reached.append(0)
                        lastSeen.append(nil)
                        density.append(density[index])
                        launch(slices.count - 1)
                    }
                }
                reached[index] =
                    slices[index].drained
                    ? 1 : Self.position(rows.last, start: slices[index].start, end: slices[index].end) ?? reached[index]
                showProgress(
                    summary, fraction: Self.fraction(slices, reached: reached), job: window.job,
                    elapsed: window.started.duration(to: .now), purpose: window.purpose, in: environment)
            }
        }
        if let failure { throw failure }
        if !slices.allSatisfy(\.drained) {
            try environment.checkShutdown()
            throw ReconcilerError(.temporary, "the window was left unfinished; run again to continue")
        }
        if slices.count > 1 {
            logger.info(
                "\(slices.count) slices, typical call \(Self.typicalMillis(callTimes).map { "\($0) ms" } ?? "unmeasured")"
            )
        }
    }

    /// A refused page token (expired, unknown): the slice is read again from its start. Upserts make that safe; it
    /// costs the slice's pages already read. A slice that now starts before what Google keeps starts at the oldest
    /// time it keeps instead, the part before recorded as a gap (Google refuses such a startTime).
    private func restart(
        _ slice: inout VoidedSlice, window: Window, checkpoint: inout SyncCheckpoint, summary: inout Summary,
        logger: Logger, in environment: JobEnvironment
    ) throws {
        logger.warning("a page token was refused; restarting its slice from its start")
        environment.counters.add("token_restarts")
        slice.token = nil
        let oldest = VoidedWindowPlanner.oldestStart(now: environment.now())
        if slice.start < oldest {
            summary.gap = (from: slice.start, to: oldest)
            logger.error(
                "gap: voids recorded \(Self.text(slice.start)) – \(Self.text(oldest)) are older than Google keeps (30 days) and cannot be fetched any more"
            )
            if !environment.dryRun {
                try SyncGap.record(
                    job: window.job, app: app.id, from: slice.start, to: oldest, on: environment.connection)
            }
            slice.start = oldest
            slice.end = max(slice.end, oldest)
        }
        if !environment.dryRun {
            let restarted = slice
            try environment.connection.transaction { connection in
                try restarted.save(job: window.job, app: app.id, on: connection)
            }
        }
    }

    /// The window is drained: the high-water mark moves to its end and its slices are forgotten.
    private func finishWindow(
        _ slices: [VoidedSlice], window: Window, checkpoint: inout SyncCheckpoint, on connection: PostgresConnection,
        dryRun: Bool
    ) throws {
        checkpoint.highWater = max(window.end, checkpoint.highWater ?? window.end)
        checkpoint.windowStart = nil
        checkpoint.windowEnd = nil
        checkpoint.pageToken = nil
        checkpoint.pagesDone = 0
        checkpoint.rowsDone = 0
        guard !dryRun else { return }
        try VoidedSlice.replace([], job: window.job, app: app.id, on: connection)
        try checkpoint.save(on: connection)
    }

    /// Halves what is left of `slice` when at least two pages of it seem left (judged from the rows stored so far
    /// and how far into its span the last one is): the slice now ends halfway between its last row and its end, and
    /// the returned slice (numbered `number`) covers the rest. Both are saved in one transaction. Costs about two
    /// calls: the new slice's last page, and the page of the old chain that reads past its new end.
    private func split(
        _ slice: inout VoidedSlice, after rows: [RefundRecord], number: Int, job: String,
        on connection: PostgresConnection
    ) throws -> VoidedSlice? {
        guard !slice.drained, slice.token != nil, let last = rows.map({ Self.millis($0.refundedAt) }).max() else {
            return nil
        }
        let (start, end) = (Self.millis(slice.start), Self.millis(slice.end))
        guard last > start, end - last > 2 else { return nil }
        let rowsPerMillisecond = Double(slice.rowsDone) / Double(last - start)
        guard rowsPerMillisecond * Double(end - last) >= Double(2 * Self.pageSize) else { return nil }
        let middle = last + (end - last) / 2
        var rest = VoidedSlice(number: number, start: VoidedSlice.date(millis: middle + 1), end: slice.end)
        rest.drained = false
        slice.end = VoidedSlice.date(millis: middle)
        let (kept, added) = (slice, rest)
        try connection.transactionRetryingConflicts { connection in
            try kept.save(job: job, app: app.id, on: connection)
            try added.save(job: job, app: app.id, on: connection)
        }
        return rest
    }

    /// The pages a slice seems to have left (those in flight included): the rows its density so far puts between
    /// its latest void time seen and its end, in pages; a slice not yet answered, its density applied to its whole
    /// span; one page when nothing is known; none when drained.
    static func pagesLeft(_ slice: VoidedSlice, lastSeen: Int64?, density: Double?) -> Double {
        guard !slice.drained else { return 0 }
        guard let density else { return 1 }
        let from = max(lastSeen ?? millis(slice.start), millis(slice.start))
        return max(1, density * Double(max(0, millis(slice.end) - from)) / Double(pageSize))
    }

    /// Whether the slice whose page was just stored (`own` pages left, of the `live` slices' estimates, itself
    /// included) is halved now. Its chain pages one page per answer time; the quota window lets `burst` calls go at
    /// once. Two reasons, each for a slice with two pages or more left:
    /// - fewer chains travel than the window started with (`traveling` < `startCount`; at most `startCount` splits
    ///   for this reason): the others drained, this one would page alone;
    /// - the last quota window would find it with two pages or more: while the gate sets the pace the chains advance
    ///   alike, a page each per answer time, each until it is drained; so the calls before the last window (the
    ///   projected calls, `stored` plus each live slice's pages, less the `last` that open the last window) take
    ///   every chain up to the same level (``pagesBefore(_:filling:)``), and what this chain has beyond that level
    ///   is paged in the last window one page per answer time. (A share in proportion to `own` misses the long
    ///   chain that is the tail: the short ones drain first.) Halving it costs about one call, so it is done only
    ///   while the last window keeps two calls to spare (a call more never opens another window), when the work
    ///   takes more than one window, and at most `2 × startCount` splits in all.
    static func wantsSplit(
        _ own: Double, live: [Double], traveling: Int, startCount: Int, splits: Int, stored: Int, burst: Int?
    ) -> Bool {
        guard own >= 2, splits < 2 * startCount else { return false }
        if traveling < startCount, splits < startCount { return true }
        guard let burst, burst > 2 else { return false }
        let left = live.reduce(0, +)
        let projected = stored + live.reduce(0) { $0 + Int($1.rounded(.up)) }
        let last = (projected - 1) % burst + 1
        // A window of work or less is paged at the answer time, not the gate's pace: only the first reason holds.
        guard left > 0, projected > burst, last <= burst - 2 else { return false }
        return own - pagesBefore(live, filling: max(0, left - Double(last))) >= 1.5
    }

    /// The level that `calls` calls bring chains of `pages` pages to when each round gives every chain not yet
    /// drained one page: the pages each chain has paged by then, at most its own.
    static func pagesBefore(_ pages: [Double], filling calls: Double) -> Double {
        var (level, budget) = (0.0, calls)
        var rest = pages.sorted()[...]
        while let next = rest.first {
            let step = (next - level) * Double(rest.count)
            guard step < budget else { return level + budget / Double(rest.count) }
            (level, budget) = (next, budget - step)
            rest = rest.dropFirst()
        }
        return level
    }

    /// A time in whole milliseconds, as the slices' bounds are.
    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The end of the slices drained from the window's start on, or nil when the first is not drained.
    static func drainedPrefixEnd(_ slices: [VoidedSlice]) -> Date? {
        var end: Date?
        // In time order: a slice split off a running one is numbered (and kept) after the others.
        for slice in slices.sorted(by: { $0.start < $1.start }) {
            guard slice.drained else { break }
            end = slice.end
        }
        return end
    }

    /// The call time most calls beat by a quarter (calls that waited for the quota gate are longer), milliseconds.
    static func typicalMillis(_ seconds: [Double]) -> Int? {
        guard !seconds.isEmpty else { return nil }
        let sorted = seconds.sorted()
        return Int((sorted[sorted.count / 4] * 1000).rounded())
    }

    /// How far into the window the slices are, weighted by their spans.
    static func fraction(_ slices: [VoidedSlice], reached: [Double]) -> Double? {
        let spans = slices.map { max(0, $0.end.timeIntervalSince($0.start)) }
        let total = spans.reduce(0, +)
        guard total > 0 else { return nil }
        return zip(spans, reached).reduce(0) { $0 + $1.0 * $1.1 } / total
    }
}
