import Foundation
import Logging
import Postgres

/// One of the recheck job's concurrent workers: its own database connection, claiming a batch at a time, one store
/// call and one transaction per subscription.
final class RecheckWorker {
    /// What every worker of a run shares.
    struct Context: Sendable {
        let app: AppConfig
        let conninfo: String
        let options: ExpiryRecheck.Options
        let source: any SubscriptionStatusSource
        let store: RecheckStore
        let counters: JobCounters
        let shutdown: ShutdownSignal
        let dryRun: Bool
        let logger: Logger
        let now: @Sendable () -> Date
        let output: @Sendable (String) -> Void
        let claimer: String
    }

    private let context: Context
    private let connection: PostgresConnection

    /// Opens the worker's connection.
    init(_ context: Context) throws {
        self.context = context
        connection = try PostgresConnection(conninfo: context.conninfo)
    }

    func close() { connection.close() }

    /// Claims a batch (a dry run only reads it) and asks about each subscription claimed.
    func process(_ batch: [RecheckPlanner.Due]) async throws -> ExpiryRecheck.Summary {
        try checkStop()
        let now = context.now()
        let claimed =
            context.dryRun
            ? try context.store.load(batch, on: connection)
            : try context.store.claim(
                batch, now: now, leaseUntil: now.addingTimeInterval(context.options.lease), claimer: context.claimer,
                on: connection)
        var summary = ExpiryRecheck.Summary()
        if !context.dryRun && claimed.count < batch.count {
            let taken = Set(claimed.map(\.id))
            summary.skipped = batch.filter { !taken.contains($0.id) }
        }
        for (position, subscription) in claimed.enumerated() {
            do {
                try checkStop()
                let asked = context.now()
                let reading = try await context.source.read(subscription, now: asked)
                try handle(reading, for: subscription, askedAt: asked, into: &summary)
            } catch {
                if !context.dryRun {
                    try? context.store.release(
                        claimed[position...].map(\.id), claimer: context.claimer, on: connection)
                }
                throw error
            }
        }
        return summary
    }

    private func handle(
        _ reading: StatusReading, for subscription: StoredSubscription, askedAt: Date,
        into summary: inout ExpiryRecheck.Summary
    ) throws {
        summary.asked += 1
        context.counters.add("asked")
        let name =
            "\(context.app.id) subscription \(subscription.id) (\(RecordedTransition.shortId(subscription.storeId)))"
        switch reading {
        case .observed: break
        case .missing:
            summary.missing += 1
            context.counters.add("missing")
            // A dry run writes nothing: its "would record" line says what a real run would mark.
            if !context.dryRun {
                context.logger.warning("\(name): the store does not know it any more; marked missing")
            }
        case .unknownState(let raw):
            summary.unknownStates += 1
            context.counters.add("unknown_state")
            context.logger.error(
                "\(name): unknown state \(raw) kept in store_state; state and entitlement left as they were")
        case .badAnswer(let reason):
            summary.badAnswers += 1
            context.counters.add("bad_answers")
            context.logger.error("\(name): unusable answer, stored state unchanged: \(reason)")
        }
        let transitions = try context.store.apply(
            reading, to: subscription, now: context.now(), askedAt: askedAt, dryRun: context.dryRun, on: connection)
        if case .observed = reading, transitions.allSatisfy({ $0.subscriptionId != subscription.id }) {
            context.counters.add("unchanged")
        }
        for transition in transitions {
            summary.transitions[transition.kind, default: 0] += 1
            context.counters.add("transition.\(transition.kind.rawValue)")
            let line = transition.line(app: context.app.id)
            if context.dryRun {
                context.output("would record: \(line)")
            } else {
                context.logger.debug("recorded: \(line)")
            }
        }
    }

    private func checkStop() throws {
        if context.shutdown.isRequested {
            throw ReconcilerError(
                .temporary, "stopped by signal; the subscriptions not yet asked about are due next run")
        }
        try Task.checkCancellation()
    }
}
