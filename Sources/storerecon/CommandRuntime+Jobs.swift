import ArgumentParser
import Foundation
import RateLimiting
import Reconciler

extension CommandRuntime {
    /// Runs one job for each app (one app's failure does not stop the others); the command exits with the worst
    /// outcome (``ExitStatus/worst(_:)``), and the results go to `--metrics-file`.
    func runJobs(
        _ job: String, apps: [AppConfig], _ body: @escaping (AppConfig, JobEnvironment) async throws -> Void
    ) async throws {
        guard !apps.isEmpty else {
            logger.warning("no app of this platform is configured; nothing to do")
            return
        }
        try verifySchema()
        let results = await jobRunner().run(job: job, apps: apps, record: record, body)
        let worst = ExitStatus.worst(results.map(\.exitCode))
        if worst != 0 { throw ExitCode(worst) }
    }

    /// Stops a job command before it writes anything when the database's schema is not this binary's (after an
    /// upgrade, before `storerecon migrate`): one clear line, rather than a job failing half-way on a missing column.
    func verifySchema() throws {
        let connection = try connect()
        defer { connection.close() }
        try Migrator(connection: connection).verifyCurrent()
    }

    /// The runner every job command uses: the shared Postgres quota gate, signals handled (since the command started).
    func jobRunner() -> JobRunner {
        let shutdown =
            self.shutdown
            ?? {
                let shutdown = ShutdownSignal()
                shutdown.install(logger: logger)
                return shutdown
            }()
        let gate = PostgresQuotaGate(
            conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock(),
            logger: logger)
        return JobRunner(
            configuration: configuration, gate: gate, shutdown: shutdown, dryRun: dryRun, quiet: options.quiet,
            logger: logger)
    }
}

extension JobRunner {
    /// Runs the job for each app in turn, adding each result to `record` as it ends. An app whose job could not even
    /// start (its connection refused, its run record not written) is that app's result, with its exit code: the
    /// other apps still run, and an earlier app's failure is not hidden behind it.
    func run(
        job: String, apps: [AppConfig], record: RunRecord,
        _ body: @escaping (AppConfig, JobEnvironment) async throws -> Void
    ) async -> [Result] {
        var results: [Result] = []
        for app in apps {
            let result: Result
            do {
                result = try await run(job: job, app: app, waitForLock: false) { try await body(app, $0) }
            } catch {
                let (code, line) = ExitStatus.classify(error)
                logger.error("\(job) for \(app.id) could not start: \(line)")
                result = Result(
                    job: job, app: app.id, outcome: JobRunRecorder.Outcome(exitCode: code), exitCode: code,
                    error: line, counts: [:], calls: [:], seconds: 0)
            }
            record.add([result])
            results.append(result)
        }
        return results
    }
}
