import Foundation
import Logging
import RateLimiting

extension JobRunner {
    /// Runs the job for every app side by side, at most `concurrency` at once (each holds one database connection),
    /// handing each result to `record` as it ends; results come back in the order of `apps`. One app's failure does
    /// not stop the others: an error before the app's job started (its connection, its lock) is its result.
    ///
    /// For jobs whose time goes to waiting on each app's own store quota (`run refund-requests`), so that fifty apps
    /// take about as long as the slowest one rather than the sum of all. With `ownGates`, each app's job asks its
    /// own gate (its own connection: a second one per app) instead of this runner's, so that the apps' grants are
    /// not queued behind one another on one connection; the quotas stay per app in the database either way.
    ///
    /// `paced` says which apps wait on a per-second store quota: they start first, and while any of them runs the
    /// others run at most one per core (``SideBySideSchedule``). By default every app is paced.
    public func runSideBySide(
        job: String, apps: [AppConfig], concurrency: Int, paced: (AppConfig) -> Bool = { _ in true },
        ownGates: (@Sendable () -> PostgresQuotaGate<ContinuousClock>)? = nil,
        record: @escaping @Sendable (Result) -> Void = { _ in },
        _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async -> [Result] {
        var schedule = SideBySideSchedule(
            paced: apps.map(paced), limit: concurrency,
            unpacedWhilePaced: ProcessInfo.processInfo.activeProcessorCount)
        return await withTaskGroup(of: (Int, Result).self) { group in
            func start(_ index: Int) {
                group.addTask {
                    guard let gate = ownGates?() else { return (index, await runOne(job: job, app: apps[index], body)) }
                    let runner = JobRunner(
                        configuration: configuration, gate: gate, shutdown: shutdown, dryRun: dryRun, quiet: quiet,
                        logger: logger, now: now)
                    let result = await runner.runOne(job: job, app: apps[index], body)
                    await gate.close()
                    return (index, result)
                }
            }
            for index in schedule.start() { start(index) }
            var results = [Result?](repeating: nil, count: apps.count)
            while let (index, result) = await group.next() {
                record(result)
                results[index] = result
                schedule.ended(index)
                for index in schedule.start() { start(index) }
            }
            return results.compactMap { $0 }
        }
    }

    /// One app's run; an error before its job started is its result.
    func runOne(
        job: String, app: AppConfig, _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async -> Result {
        do {
            return try await run(job: job, app: app, waitForLock: false) { try await body(app, $0) }
        } catch {
            let (code, line) = ExitStatus.classify(error)
            logger.error("\(line)", metadata: ["app": "\(app.id)", "job": "\(job)"])
            return Result(
                job: job, app: app.id, outcome: JobRunRecorder.Outcome(exitCode: code), exitCode: code, error: line,
                counts: [:], calls: [:], seconds: 0)
        }
    }
}
