import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// Every call the ``GoogleIntakeRunner`` makes to the ledger: a page's rows mapped and made ready in its call's task,
/// the orders the ledger knows, a page stored with its slice row, checkpoint and the orders priced ahead, the orders
/// settled after it, and a dry run's count.
extension GoogleIntakeRunner {
    /// One voided page, its intake mapped and made ready to write here (in the call's own task) while the page
    /// before is being stored.
    static func call(
        _ call: GoogleVoidedSync.PagerStateMachine.Call, sync: GoogleVoidedSync, purpose: CallPurpose, runId: Int64?,
        prepare: Bool, now: @Sendable () -> Date
    ) async -> GoogleVoidedSync.Answer {
        let began = ContinuousClock.now
        let result: Result<VoidedPurchasesListResponse, any Error>
        do {
            result = .success(
                try await sync.fetch(start: call.start, end: call.end, token: call.token, purpose: purpose))
        } catch {
            result = .failure(error)
        }
        var answer = GoogleVoidedSync.Answer(
            slice: call.slice, result: result, seconds: began.duration(to: .now).seconds)
        if case .success(let page) = result {
            answer.intake = RefundRecord.intake(page, receivedAt: now())
            if prepare { answer.prepared = sync.ledger.prepare(answer.intake.records, runId: runId) }
        }
        return answer
    }

    /// The Orders call for a page that waits, in a child task that returns the page priced and made ready to write.
    func askAhead(_ call: GoogleIntakeMachine.AheadCall) -> @Sendable () async -> GoogleVoidedSync.CallEnded {
        let (amounts, ledger, purpose, runId) = (sync.orderAmounts, sync.ledger, window.purpose, environment.runId)
        return {
            let orders = await amounts.call(call.ids, purpose: purpose, rendered: false)
            var page = call.answer
            switch orders.result {
            case .success(let answered):
                let priced = GoogleOrderStore.priceAhead(page.intake.records, answered: answered)
                page.intake.records = priced.records
                page.prepared = ledger.prepare(priced.records, runId: runId)
                return .ahead(.init(page: page, number: call.page, ids: call.ids, priced: priced))
            case .failure(let error):
                return .ahead(.init(page: page, number: call.page, ids: call.ids, error: error))
            }
        }
    }

    /// The orders among `ids` that the ledger knows (those are asked after the page is stored).
    func known(_ ids: [String]) throws -> Set<String> {
        try sync.orderAmounts.orders.known(ids, on: environment.connection)
    }

    /// Stores the page with its slice row, the checkpoint and its orders priced plainly ahead in one transaction;
    /// then the other orders of its call ahead, and settles its orders asked after storing.
    func store(_ store: GoogleIntakeMachine.PageStore) throws -> GoogleIntakeMachine.StoredPage {
        defer { FreedMemory.release() }
        let write = store.write
        let prepared = store.batch ?? sync.ledger.prepare(write.records, runId: environment.runId)
        let (sync, window, environment, logger) = (sync, window, environment, logger)
        let orders = sync.orderAmounts.orders
        // What the write counts is added once it commits: a transaction run again for a conflict counts afresh.
        let (counts, ahead, tally) = try environment.connection.transactionRetryingConflicts { connection in
            let tally = JobCounters()
            var (batch, ahead) = (prepared, store.pricedAhead)
            if var priced = ahead, try orders.confirmAhead(&priced, on: connection) {
                batch = sync.ledger.prepare(priced.records, runId: environment.runId)
                ahead = priced
            }
            let counts = try sync.ledger.write(
                batch, quarantined: write.quarantined, job: .googleVoided, expectNew: write.expectNew, logger: logger,
                counters: tally, on: connection)
            if let ahead { try orders.saveAhead(ahead, on: connection) }
            if let slice = write.sliceRow {
                try slice.save(job: window.job, app: sync.app.id, on: connection)
            } else {
                try VoidedSlice.replace([], job: window.job, app: sync.app.id, on: connection)
            }
            try write.checkpoint.save(on: connection)
            return (counts, ahead, tally)
        }
        for (name, amount) in tally.snapshot { environment.counters.add(name, amount) }
        environment.counters.add("inserted", counts.0)
        environment.counters.add("updated", counts.1)
        var stored = GoogleIntakeMachine.StoredPage(inserted: counts.0, updated: counts.1)
        stored.demotedRows = (store.pricedAhead?.pricedRows ?? 0) - (ahead?.pricedRows ?? 0)
        if let rest = ahead?.rest, !rest.orders.isEmpty {
            // The page's rows are in the ledger now: the other orders of its call are stored as answers are.
            let saved = try sync.orderAmounts.orders.store(
                rest, runId: environment.runId, logger: logger, on: environment.connection)
            stored.rest.priced = saved.priced
            stored.rest.pending = saved.pending
            environment.counters.add("orders_over_refunded", saved.overRefunded)
        }
        if !store.afterStoring.isEmpty {
            stored.toAsk = try sync.orderAmounts.orders.settleVoided(store.afterStoring, on: environment.connection)
        }
        return stored
    }

    /// A dry run's page: the rows that would be new.
    func countNew(_ rows: [RefundRecord]) throws -> Int {
        let fresh = try sync.ledger.countNew(rows, on: environment.connection)
        environment.counters.add("would_insert", fresh)
        return fresh
    }
}
