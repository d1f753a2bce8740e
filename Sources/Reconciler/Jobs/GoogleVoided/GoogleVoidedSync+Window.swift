import Foundation
import Logging
import Postgres
import RateLimiting

/// Which window a run pages, and its slices.
extension GoogleVoidedSync {
    /// The window a run pages, as opening it left it.
    struct OpenedWindow {
        var start: Date
        var end: Date
        var slices: [VoidedSlice]
        /// The checkpoint the paging starts from: the window in flight, or the new one with its bounds.
        var checkpoint: SyncCheckpoint
        /// The sync's window older than Google keeps, found by the plan (and recorded), for the run's summary.
        var gap: (from: Date, to: Date)?
    }

    /// The window this run pages: the one in flight when it is the one asked for, else a new one planned from the
    /// `loaded` checkpoint (its gap recorded), split into slices and saved with them.
    func openWindow(
        _ mode: Mode, job: String, purpose: CallPurpose, checkpoint loaded: SyncCheckpoint, logger: Logger,
        in environment: JobEnvironment
    ) async throws -> OpenedWindow {
        var checkpoint = loaded
        let now = environment.now()
        let plan: VoidedWindowPlanner.Plan
        switch mode {
        case .incremental:
            plan = planner.incremental(highWater: checkpoint.highWater, now: now)
        case .backfill(let since, let until):
            plan = planner.backfill(since: since, until: until, now: now)
        }
        if Self.resumes(mode, plan: plan, checkpoint: checkpoint), let start = checkpoint.windowStart,
            let end = checkpoint.windowEnd
        {
            var slices = try resumedSlices(job: job, checkpoint: checkpoint, on: environment.connection)
            try clampUnstarted(
                &slices, mode: mode, highWater: checkpoint.highWater, job: job, logger: logger, in: environment)
            let open = slices.filter { !$0.drained }.count
            logger.info(
                "resuming window \(Self.text(start)) – \(Self.text(end)) after \(checkpoint.pagesDone) stored pages (\(open) of \(slices.count) slices unfinished)"
            )
            return OpenedWindow(start: start, end: end, slices: slices, checkpoint: checkpoint)
        }
        checkpoint.windowStart = nil
        checkpoint.windowEnd = nil
        checkpoint.pageToken = nil
        checkpoint.pagesDone = 0
        checkpoint.rowsDone = 0
        checkpoint.windowRequest = mode.requestKey
        let gap = try recordGap(plan.gap, mode: mode, job: job, logger: logger, in: environment)
        let (slices, saved) = try await newSlices(
            start: plan.start, end: plan.end, job: job, purpose: purpose, checkpoint: checkpoint, in: environment)
        logger.info(
            "window \(Self.text(plan.start)) – \(Self.text(plan.end)) in \(slices.count) slice\(slices.count == 1 ? "" : "s")"
        )
        return OpenedWindow(start: plan.start, end: plan.end, slices: slices, checkpoint: saved, gap: gap)
    }

    /// Whether the window in flight is the one asked for (a backfill with other bounds starts afresh).
    static func resumes(_ mode: Mode, plan: VoidedWindowPlanner.Plan, checkpoint: SyncCheckpoint) -> Bool {
        switch mode {
        case .incremental:
            return checkpoint.inFlight
        case .backfill(let since, let until):
            // Only the window of the same request, as its command line gave it.
            if let asked = checkpoint.windowRequest { return checkpoint.inFlight && asked == mode.requestKey }
            // A window planned by an earlier version, which kept only the planned bounds. A bound beyond Google's
            // limits (--since older than 30 days, --until after now) is clamped afresh by every run and so moves: it
            // matches when both runs clamped it.
            let sameStart = checkpoint.windowStart.map { $0 == since || ($0 > since && plan.start > since) } ?? false
            let sameEnd =
                until.map { wanted in
                    checkpoint.windowEnd.map { $0 == wanted || ($0 < wanted && plan.end < wanted) } ?? false
                } ?? true
            return checkpoint.inFlight && sameStart && sameEnd
        }
    }

    /// The slices of the window in flight. A window left in flight by a version that paged one chain: its token
    /// goes on as one slice.
    private func resumedSlices(
        job: String, checkpoint: SyncCheckpoint, on connection: PostgresConnection
    ) throws -> [VoidedSlice] {
        let slices = try VoidedSlice.load(job: job, app: app.id, on: connection)
        guard slices.isEmpty, let start = checkpoint.windowStart, let end = checkpoint.windowEnd else { return slices }
        var slice = VoidedSlice(number: 0, start: start, end: end)
        slice.token = checkpoint.pageToken
        slice.pagesDone = checkpoint.pagesDone
        slice.rowsDone = checkpoint.rowsDone
        return [slice]
    }

    /// A resumed slice that has not stored a page is asked for by its start: one that now starts before what Google
    /// keeps (the run that planned it was stopped, and the next came days later) starts at the oldest time Google
    /// keeps instead, and the part before it is a gap (a backfill's `--since` clamped). Google refuses such a
    /// `startTime` or clamps it without a word; either way that part cannot be read any more. A slice with a token
    /// goes on from it (a refused token restarts it, clamped the same way). As when a window is planned, only the
    /// part after the incremental checkpoint `highWater` is a gap: the overlap before it was read by earlier runs.
    private func clampUnstarted(
        _ slices: inout [VoidedSlice], mode: Mode, highWater: Date?, job: String, logger: Logger,
        in environment: JobEnvironment
    ) throws {
        let oldest = VoidedWindowPlanner.oldestStart(now: environment.now())
        for index in slices.indices where !slices[index].drained && slices[index].token == nil {
            guard let lost = slices[index].clamp(to: oldest) else { continue }
            if mode == .incremental {
                _ = try recordGap(
                    Self.lost(lost, after: highWater), mode: mode, job: job, logger: logger, in: environment)
            } else {
                environment.counters.add("since_clamped")
                logger.warning(
                    "the backfill resumed after Google stopped keeping voids recorded \(Self.text(lost.start)) – \(Self.text(lost.end)): they cannot be fetched any more"
                )
            }
            if !environment.dryRun {
                try slices[index].save(job: job, app: app.id, on: environment.connection)
            }
        }
    }

    /// A planned window that starts later than wanted. A backfill asked for more than Google keeps: its start is
    /// clamped, and that is no lost window of the sync's (the incremental checkpoint never fell behind), so no gap
    /// is recorded. The sync's gap is recorded and shown by `status`, and returned for the run's summary.
    func recordGap(
        _ gap: (from: Date, to: Date)?, mode: Mode, job: String, logger: Logger, in environment: JobEnvironment
    ) throws -> (from: Date, to: Date)? {
        guard let gap else { return nil }
        guard mode == .incremental else {
            environment.counters.add("since_clamped")
            logger.warning(
                "--since \(Self.text(gap.from)) is older than Google keeps (30 days): the backfill starts at \(Self.text(gap.to)); voids recorded before it cannot be fetched"
            )
            return nil
        }
        logger.error(
            "gap: voids recorded \(Self.text(gap.from)) – \(Self.text(gap.to)) are older than Google keeps (30 days) and cannot be fetched any more"
        )
        if !environment.dryRun {
            try SyncGap.record(job: job, app: app.id, from: gap.from, to: gap.to, on: environment.connection)
        }
        return gap
    }

    /// The part of `lost` after the incremental checkpoint `highWater`, which is all of it that earlier runs did not
    /// read (a window starts an overlap before the checkpoint); nil when nothing is left.
    static func lost(_ lost: DateInterval, after highWater: Date?) -> (from: Date, to: Date)? {
        let from = max(lost.start, highWater ?? lost.start)
        return from < lost.end ? (from, lost.end) : nil
    }

    /// A new window's slices, as many as the typical call time and the quota's burst call for, saved with the
    /// checkpoint in one transaction (a dry run saves nothing), and the checkpoint with the window's bounds.
    private func newSlices(
        start: Date, end: Date, job: String, purpose: CallPurpose, checkpoint loaded: SyncCheckpoint,
        in environment: JobEnvironment
    ) async throws -> (slices: [VoidedSlice], checkpoint: SyncCheckpoint) {
        var checkpoint = loaded
        var callSeconds = checkpoint.callMillis.map { Double($0) / 1000 }
        if callSeconds == nil, sliceCap > 1 {
            // Never measured: the access token every call needs travels the same network; its time stands in.
            let began = ContinuousClock.now
            _ = try await client.authenticator.accessToken(purpose: purpose)
            callSeconds = began.duration(to: .now).seconds
        }
        let count = Self.sliceCount(callSeconds: callSeconds, burst: burst, cap: sliceCap)
        let slices = VoidedSlice.split(start: start, end: end, count: count)
        guard !environment.dryRun else { return (slices, checkpoint) }
        checkpoint.windowStart = start
        checkpoint.windowEnd = end
        let (app, saved) = (app.id, checkpoint)
        try environment.connection.transaction { connection in
            try VoidedSlice.replace(slices, job: job, app: app, on: connection)
            try saved.save(on: connection)
        }
        return (slices, checkpoint)
    }
}
