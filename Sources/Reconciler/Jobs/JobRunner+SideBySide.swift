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
    /// others wait until they have sent their first answers, then run a few per core (``SideBySideSchedule``). By
    /// default every app is paced.
    public func runSideBySide(
        job: String, apps: [AppConfig], concurrency: Int, paced: (AppConfig) -> Bool = { _ in true },
        gates: [any QuotaGate] = [],
        record: @escaping @Sendable (Result) -> Void = { _ in },
        _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async -> [Result] {
        var schedule = SideBySideSchedule(
            paced: apps.map(paced), limit: concurrency, cores: ProcessInfo.processInfo.activeProcessorCount)
        let pool = JobConnectionPool(conninfo: configuration.database.url)
        defer { pool.close() }
        guard !apps.isEmpty else { return [] }
        let (events, reporter) = AsyncStream.makeStream(of: SideBySideEvent.self)
        var started = 0
        func nextRunner(_ index: Int) -> JobRunner {
            var runner = self
            if !gates.isEmpty {
                runner = JobRunner(
                    configuration: configuration, gate: gates[started % gates.count], shutdown: shutdown,
                    dryRun: dryRun, quiet: quiet, logger: logger, now: now)
            }
            runner.connectionPool = pool
            runner.warmUp = WarmUpSignal(threshold: SideBySideSchedule.warmAnswers) { reporter.yield(.warm(index)) }
            started += 1
            // The last app to start takes its connection from the pool; from then on each closes with its job.
            if started == apps.count { pool.drain() }
            return runner
        }
        return await withDiscardingTaskGroup { group in
            func start(_ index: Int) {
                let runner = nextRunner(index)
                group.addTask { reporter.yield(.ended(index, await runner.runOne(job: job, app: apps[index], body))) }
            }
            for index in schedule.start() { start(index) }
            var results = [Result?](repeating: nil, count: apps.count)
            var unfinished = apps.count
            // Each job's end, and each paced job's first answers, may let the next apps start.
            for await event in events {
                switch event {
                case .warm(let index):
                    schedule.warm(index)
                case .ended(let index, let result):
                    record(result)
                    results[index] = result
                    schedule.ended(index)
                    unfinished -= 1
                }
                if unfinished == 0 { break }
                for index in schedule.start() { start(index) }
            }
            reporter.finish()
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

/// What a side-by-side run's jobs tell its schedule.
private enum SideBySideEvent: Sendable {
    /// The paced job of app `index` sent its first answers (``JobEnvironment/answersSent(_:)``).
    case warm(Int)
    /// The job of app `index` ended with this result.
    case ended(Int, JobRunner.Result)
}
