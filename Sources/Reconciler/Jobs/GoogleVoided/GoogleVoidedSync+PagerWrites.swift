import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// What the ``GoogleVoidedSync/Pager`` does with an answered page and its slices: counts the page, stores it with
/// its slice row and the checkpoint, and saves a restarted or split slice.
extension GoogleVoidedSync.Pager {
    func count(
        _ page: VoidedPurchasesListResponse, _ answer: GoogleVoidedSync.Answer, summary: inout GoogleVoidedSync.Summary
    ) {
        logger.debug(
            "voided page answered",
            metadata: [
                "slice": "\(machine.slices[answer.slice].number)", "rows": "\(page.voidedPurchases.count)",
                "ms": "\(Int((answer.seconds * 1000).rounded()))",
                // The other calls: this one has answered.
                "in_flight": "\(machine.inFlight.subtracting([answer.slice]).count)",
            ])
        summary.pages += 1
        summary.rows += page.voidedPurchases.count
        summary.quarantined += answer.intake.quarantined.count
        environment.counters.add("pages")
        environment.counters.add("rows_fetched", page.voidedPurchases.count)
        environment.counters.add("merged_repeats", answer.intake.merged)
    }

    /// Stores the page with its slice row and the checkpoint in one transaction.
    /// - Returns: the rows new to the ledger.
    /// - Parameter prepared: the page's batch made ready in its call's task, used when it is this page's.
    func store(
        _ write: GoogleVoidedSync.PagerStateMachine.PageWrite, prepared: RefundLedger.Prepared?,
        priced: GoogleOrderStore.PricedAhead?, summary: inout GoogleVoidedSync.Summary
    ) throws -> Int {
        // The same records, so the same array (compared by its storage first).
        let batch =
            prepared.flatMap { $0.records == write.records ? $0 : nil }
            ?? sync.ledger.prepare(write.records, runId: environment.runId)
        let (sync, window, environment, logger) = (sync, window, environment, logger)
        let counts = try environment.connection.transactionRetryingConflicts { connection in
            let counts = try sync.ledger.write(
                batch, quarantined: write.quarantined, job: .googleVoided, expectNew: write.expectNew, logger: logger,
                counters: environment.counters, on: connection)
            if let priced { try sync.orderAmounts.orders.saveAhead(priced, on: connection) }
            if let slice = write.sliceRow {
                try slice.save(job: window.job, app: sync.app.id, on: connection)
            } else {
                try VoidedSlice.replace([], job: window.job, app: sync.app.id, on: connection)
            }
            try write.checkpoint.save(on: connection)
            return counts
        }
        summary.inserted += counts.0
        summary.updated += counts.1
        environment.counters.add("inserted", counts.0)
        environment.counters.add("updated", counts.1)
        return counts.0
    }

    /// Saves a slice read again from its start, and the gap when its start left what Google keeps.
    func restart(_ slice: VoidedSlice, gap: DateInterval?, summary: inout GoogleVoidedSync.Summary) throws {
        logger.warning("a page token was refused; restarting its slice from its start")
        environment.counters.add("token_restarts")
        if let gap {
            summary.gap = (from: gap.start, to: gap.end)
            logger.error(
                "gap: voids recorded \(GoogleVoidedSync.text(gap.start)) – \(GoogleVoidedSync.text(gap.end)) are older than Google keeps (30 days) and cannot be fetched any more"
            )
            if !environment.dryRun {
                try SyncGap.record(
                    job: window.job, app: sync.app.id, from: gap.start, to: gap.end, on: environment.connection)
            }
        }
        guard !environment.dryRun else { return }
        let (job, app) = (window.job, sync.app.id)
        try environment.connection.transaction { connection in
            try slice.save(job: job, app: app, on: connection)
        }
    }

    /// Saves both halves of a split slice in one transaction, before the new half's call leaves.
    func split(_ kept: VoidedSlice, _ added: VoidedSlice, pagesLeft: Double, allPagesLeft: Double) throws {
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
                // The others: the new half's call is counted already.
                "in_flight": "\(machine.inFlight.count - 1)",
            ])
    }
}
