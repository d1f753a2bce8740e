import Foundation
import Logging
import Postgres

/// `run nightly` for a fleet of apps: every app's jobs start at once and each app keeps its own order
/// (``NightlyPlan``), as far as the database connections of ``ConnectionBudget`` allow. An app whose night passes
/// `nightly.appTimeout` has its job in hand stopped (what it saved stays; exit 75) and its other jobs left for the
/// next run; one app's failure, quota stop or hung store never holds up the others.
///
/// Each job still runs under its own advisory lock and is recorded in `job_run` by ``JobRunner``; each result is
/// handed to `record` as it ends (for `--metrics-file`), and every app ends with one summary line.
public struct NightlyFleet: Sendable {
    /// Runs each job (lock, `job_run`, counting gate).
    public let runner: JobRunner
    /// The database connections the apps' jobs may hold at once.
    public let budget: ConnectionBudget
    /// How long one app's night may take.
    public let appTimeout: Duration
    /// `nightly.onLocked: wait`.
    public let waitForLock: Bool
    /// The jobs of an app, in order.
    public let plan: @Sendable (AppConfig) -> [NightlyPlan.Job]
    /// Called with each job's result as it ends.
    public let record: @Sendable (JobRunner.Result) -> Void

    /// Creates the fleet runner; the plan is ``NightlyPlan/jobs(for:configuration:)`` unless given.
    public init(
        runner: JobRunner, budget: ConnectionBudget, plan: (@Sendable (AppConfig) -> [NightlyPlan.Job])? = nil,
        record: @escaping @Sendable (JobRunner.Result) -> Void = { _ in }
    ) {
        self.runner = runner
        self.budget = budget
        let configuration = runner.configuration
        appTimeout = .seconds(configuration.nightly.appTimeout.seconds)
        waitForLock = configuration.nightly.onLocked == .wait
        self.plan = plan ?? { NightlyPlan.jobs(for: $0, configuration: configuration) }
        self.record = record
    }

    /// Runs every app's night; returns the results by app (in the order of `apps`), then by job.
    public func run(apps: [AppConfig]) async -> [JobRunner.Result] {
        // Every app needs a connection to make progress, so more apps in flight than connections would only wait.
        let limit = min(apps.count, budget.total)
        return await withTaskGroup(of: (Int, [JobRunner.Result]).self) { group in
            var next = 0
            while next < limit {
                let index = next
                group.addTask { (index, await runApp(apps[index])) }
                next += 1
            }
            var byApp = [[JobRunner.Result]](repeating: [], count: apps.count)
            while let (index, results) = await group.next() {
                byApp[index] = results
                if next < apps.count {
                    let index = next
                    group.addTask { (index, await runApp(apps[index])) }
                    next += 1
                }
            }
            return byApp.flatMap { $0 }
        }
    }

    /// One app's jobs in order, raced against its deadline: when the deadline passes first, the job in hand is
    /// cancelled (it records the deadline as its outcome) and the rest are not started.
    func runApp(_ app: AppConfig) async -> [JobRunner.Result] {
        let started = ContinuousClock.now
        let deadline = AppDeadline()
        let logger = logger(app)
        let appTimeout = appTimeout
        let results = await race(
            { await runJobs(app, deadline: deadline) },
            until: {
                do {
                    try await Task.sleep(for: appTimeout)
                } catch {
                    return
                }
                let limit = ConfigDuration(seconds: Int64(appTimeout.seconds)).description
                deadline.expire("the app's night passed nightly.appTimeout (\(limit)); the rest waits for the next run")
                logger.warning("nightly.appTimeout (\(limit)) passed: stopping the job in hand, progress saved")
            }
        ).value
        let seconds = (ContinuousClock.now - started).seconds
        let worst = ExitStatus.worst(results.map(\.exitCode))
        let jobs = results.map { "\($0.job) \($0.outcome.rawValue) \(String(format: "%.1f", $0.seconds)) s" }
        let coverage = runner.dryRun ? nil : await coverageLine(app)
        let summary =
            "night \(worst == 0 ? "done" : "ended with exit \(worst)") in \(String(format: "%.1f", seconds)) s: "
            + jobs.joined(separator: ", ") + (coverage.map { "; \($0)" } ?? "")
        logger.log(level: worst == 0 ? .info : .warning, "\(summary)")
        return results
    }

    /// The jobs of `app` in order; a job not started (deadline or signal) is reported, not recorded in `job_run`.
    func runJobs(_ app: AppConfig, deadline: AppDeadline) async -> [JobRunner.Result] {
        var results: [JobRunner.Result] = []
        for job in plan(app) {
            let result: JobRunner.Result
            if let reason = deadline.passed ?? (runner.shutdown.isRequested ? "stopped by signal" : nil) {
                logger(app, job: job.name).warning("not started: \(reason)")
                result = Self.result(job.name, app, ExitStatus.temporary, reason)
            } else {
                do {
                    result = try await budget.withConnections(job.connections) {
                        try await runner.run(job: job.name, app: app, waitForLock: waitForLock, deadline: deadline) {
                            try await job.body(app, runner.configuration, $0)
                        }
                    }
                } catch {
                    // Before the job's record existed: its database could not be reached, or the wait for the
                    // connections or the lock was cut by the deadline.
                    let (code, line) = deadline.passed.map { (ExitStatus.temporary, $0) } ?? ExitStatus.classify(error)
                    logger(app, job: job.name).error("\(line)")
                    result = Self.result(job.name, app, code, line)
                }
            }
            record(result)
            results.append(result)
        }
        return results
    }

    /// What the app's night left for the next ones (``NightlyCoverage``), or nil when nothing is, or when the
    /// database cannot say (the jobs' own lines have said why).
    func coverageLine(_ app: AppConfig) async -> String? {
        await DatabaseThreads.run {
            do {
                let connection = try PostgresConnection(conninfo: runner.configuration.database.url)
                defer { connection.close() }
                return try NightlyCoverage.measure(app, on: connection).line
            } catch {
                return nil
            }
        }
    }

    static func result(_ job: String, _ app: AppConfig, _ code: Int32, _ line: String) -> JobRunner.Result {
        let outcome = JobRunRecorder.Outcome(exitCode: code)
        return JobRunner.Result(
            job: job, app: app.id, outcome: outcome, exitCode: code, error: line, counts: [:], calls: [:], seconds: 0)
    }

    func logger(_ app: AppConfig, job: String? = nil) -> Logger {
        var logger = runner.logger
        logger[metadataKey: "app"] = "\(app.id)"
        if let job { logger[metadataKey: "job"] = "\(job)" }
        return logger
    }
}

extension NightlyFleet {
    /// `nightly.concurrency` when it is not set: half the connections the server has free (the rest is left to the
    /// app backend, other hosts and backfills), at most 16 per CPU core (each job's statement in flight holds a thread
    /// of ``DatabaseThreads`` while it waits, and the jobs share the cores for the rest), and at least one.
    public static func defaultConcurrency(freeConnections: Int, cores: Int) -> Int {
        max(1, min(freeConnections / 2, 16 * max(1, cores), DatabaseThreads.mostWaitingConnections))
    }

    /// Connections the server can still accept from a role without special rights, now.
    public static func freeConnections(on connection: PostgresConnection) throws -> Int {
        try connection.query(
            """
            SELECT current_setting('max_connections')::int
                   - current_setting('superuser_reserved_connections')::int
                   - coalesce(current_setting('reserved_connections', true)::int, 0)
                   - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS free
            """)[0].decode("free")
    }
}
