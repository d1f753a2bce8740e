import Foundation
import Payouts
import StoreCalendar

extension NightlyPlan {
    /// The payout job of an app that is set up for it (`run nightly`: one listing or a few requests a night).
    public static func payoutJobs(for app: AppConfig) -> [Job] {
        guard app.fetchesPayouts else { return [] }
        return [
            Job(name: PayoutSync.job, connections: 1) { app, _, environment in
                try await syncPayouts(app: app, month: nil, in: environment)
            }
        ]
    }

    /// Runs `sync payouts` for one app in a job's environment.
    public static func syncPayouts(app: AppConfig, month: CalendarMonth?, in environment: JobEnvironment) async throws {
        guard let source = try StoreClients.payoutSource(for: app, gate: environment.gate, logger: environment.logger)
        else { return }
        let sync = PayoutSync(
            app: app.id, source: source, connection: environment.connection, logger: environment.logger)
        let summary = try await sync.run(
            month: month, now: environment.now(), purpose: .incremental, dryRun: environment.dryRun)
        let line =
            "payouts: \(summary.fetched) fetched, \(summary.inserted) new, \(summary.replaced) replaced, "
            + "\(summary.unchanged) unchanged, \(summary.skipped) already stored, "
            + "\(summary.notPublished) not published yet, \(summary.duplicate) the same file as a stored one, "
            + "\(summary.keptDropped) dropped by an operator"
        environment.logger.info("\(line)", metadata: ["app": "\(app.id)"])
    }
}
