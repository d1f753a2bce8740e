import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// What the ``GoogleIntakeRunner`` notes of the answers, and saves of the slices: a restarted or split slice, and the
/// window closed.
extension GoogleIntakeRunner {
    /// A voided page answered: the log line and the counters (the machine counts it in the summary).
    func note(
        _ page: VoidedPurchasesListResponse, _ answer: GoogleVoidedSync.Answer, machine: GoogleIntakeMachine
    ) {
        logger.debug(
            "voided page answered",
            metadata: [
                "slice": "\(machine.paging.slices[answer.slice].number)", "rows": "\(page.voidedPurchases.count)",
                "ms": "\(Int((answer.seconds * 1000).rounded()))",
                // The other calls: this one has answered.
                "in_flight": "\(machine.paging.inFlight.subtracting([answer.slice]).count)",
                // The split rule's estimate of all slices' pages left, this one's included (see splitParts).
                "pages_left": "\(String(format: "%.1f", machine.paging.states.map(\.pagesLeft).reduce(0, +)))",
            ])
        environment.counters.add("pages")
        environment.counters.add("rows_fetched", page.voidedPurchases.count)
        environment.counters.add("merged_repeats", answer.intake.merged)
    }

    /// A waiting page's Orders call answered: the counters (the machine counts it in the summary).
    func note(_ answer: GoogleVoidedSync.AheadAnswer) {
        environment.counters.add("orders_calls")
        guard let priced = answer.priced else {
            logger.debug("a call of orders ahead failed: \(answer.error.map { "\($0)" } ?? "no answer")")
            return
        }
        environment.counters.add("orders_fetched", priced.orderIds.count)
        environment.counters.add("orders_asked_ahead", priced.orderIds.count)
    }

    /// Saves a slice read again from its start, and the gap when its start left what Google keeps. A backfill's
    /// start clamped so is a warning, no gap: the incremental sync lost nothing (as when a backfill resumes).
    func restart(_ slice: VoidedSlice, gap: DateInterval?) throws {
        logger.warning("a page token was refused; restarting its slice from its start")
        environment.counters.add("token_restarts")
        if let gap, window.purpose == .backfill {
            environment.counters.add("since_clamped")
            logger.warning(
                "the backfill restarted after Google stopped keeping voids recorded \(GoogleVoidedSync.text(gap.start)) – \(GoogleVoidedSync.text(gap.end)): they cannot be fetched any more"
            )
        } else if let gap {
            _ = try sync.recordGap(
                GoogleVoidedSync.lost(gap, after: window.readBefore), mode: .incremental, job: window.job,
                logger: logger, in: environment)
        }
        guard !environment.dryRun else { return }
        let (job, app) = (window.job, sync.app.id)
        try environment.connection.transaction { connection in
            try slice.save(job: job, app: app, on: connection)
        }
    }

    /// Saves a split slice, cut short, and the part cut off it in one transaction, before the part's call leaves.
    func split(
        _ kept: VoidedSlice, _ added: VoidedSlice, pagesLeft: Double, allPagesLeft: Double, inFlight: Set<Int>
    ) throws {
        let (job, app) = (window.job, sync.app.id)
        try environment.connection.transactionRetryingConflicts { connection in
            try kept.save(job: job, app: app, on: connection)
            try added.save(job: job, app: app, on: connection)
        }
        environment.counters.add("slice_splits")
        logger.debug(
            "slice split",
            metadata: [
                "slice": "\(kept.number)", "new_slice": "\(added.number)",
                "pages_left": "\(String(format: "%.1f", pagesLeft))",
                "all_pages_left": "\(String(format: "%.1f", allPagesLeft))",
                // Every call, the new parts' included.
                "in_flight": "\(inFlight.count)",
            ])
    }

    /// The window drained: its slices forgotten and the checkpoint saved, together (slices forgotten with the window
    /// still open would have the next run page it again).
    func close(_ checkpoint: SyncCheckpoint) throws {
        guard !environment.dryRun else { return }
        let (job, app) = (window.job, sync.app.id)
        try environment.connection.transactionRetryingConflicts { connection in
            try VoidedSlice.replace([], job: job, app: app, on: connection)
            try checkpoint.save(on: connection)
        }
    }
}
