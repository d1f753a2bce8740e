import Foundation
import Logging
import RateLimiting

extension JobRunner {
    /// Runs the job for every app side by side, at most `concurrency` at once (each holds one database connection),
    /// handing each result to `record` as it ends; results come back in the order of `apps`. One app's failure does
    /// not stop the others: an error before the app's job started (its connection, its lock) is its result.
    ///
    /// For jobs whose time goes to waiting on each app's own store quota (`run refund-requests`), so that fifty apps
    /// take about as long as the slowest one rather than the sum of all. The jobs' connections come from a
    /// ``JobConnectionPool``: an app that ends hands its connection, reset, to the next app to start, so the run
    /// opens as many as run at once. With `gates`, the apps ask those instead of this runner's gate, assigned in turn
    /// in start order, so that the apps' grants are not all queued on one connection; the quotas stay per app in the
    /// database either way. The caller closes the gates.
    ///
    /// `paced` says which apps wait on a per-second store quota: they start first, and while any of them runs the
    /// others run at most one per core (``SideBySideSchedule``). By default every app is paced.
    public func runSideBySide(
        job: String, apps: [AppConfig], concurrency: Int, paced: (AppConfig) -> Bool = { _ in true },
        gates: [any QuotaGate] = [],
        record: @escaping @Sendable (Result) -> Void = { _ in },
        _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async -> [Result] {
        var schedule = SideBySideSchedule(
            paced: apps.map(paced), limit: concurrency,
            unpacedWhilePaced: ProcessInfo.processInfo.activeProcessorCount)
        let pool = JobConnectionPool(conninfo: configuration.database.url)
        defer { pool.close() }
        var started = 0
        func nextRunner() -> JobRunner {
            var runner = self
            if !gates.isEmpty {
                runner = JobRunner(
                    configuration: configuration, gate: gates[started % gates.count], shutdown: shutdown,
                    dryRun: dryRun, quiet: quiet, logger: logger, now: now)
            }
            runner.connectionPool = pool
            started += 1
            return runner
        }
        return await withTaskGroup(of: (Int, Result).self) { group in
            func start(_ index: Int) {
                let runner = nextRunner()
                group.addTask { (index, await runner.runOne(job: job, app: apps[index], body)) }
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
