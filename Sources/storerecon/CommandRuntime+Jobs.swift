import ArgumentParser
import Foundation
import RateLimiting
import Reconciler

extension CommandRuntime {
    /// Runs one job for each app (one app's failure does not stop the others) and exits with the worst outcome:
    /// 1 over 78 over 75 over 0.
    func runJobs(
        _ job: String, apps: [AppConfig], _ body: @escaping (AppConfig, JobEnvironment) async throws -> Void
    ) async throws {
        guard !apps.isEmpty else {
            logger.warning("no app of this platform is configured; nothing to do")
            return
        }
        let results = try await jobRunner().run(job: job, apps: apps, body)
        let worst = Self.worstExitCode(results.map(\.exitCode))
        if worst != 0 { throw ExitCode(worst) }
    }

    /// The runner every job command uses: the shared Postgres quota gate, signals handled.
    func jobRunner() -> JobRunner {
        let shutdown = ShutdownSignal()
        shutdown.install()
        let gate = PostgresQuotaGate(
            conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock(),
            logger: logger)
        return JobRunner(
            configuration: configuration, gate: gate, shutdown: shutdown, dryRun: options.dryRun, quiet: options.quiet,
            logger: logger)
    }

    /// The exit code of several outcomes: any failure (1) wins, then configuration (78), then "continue later" (75).
    static func worstExitCode(_ codes: [Int32]) -> Int32 {
        if codes.contains(1) { return 1 }
        if codes.contains(78) { return 78 }
        if codes.contains(75) { return 75 }
        return codes.first { $0 != 0 } ?? 0
    }
}

extension JobRunner {
    /// Runs the job for each app in turn.
    func run(
        job: String, apps: [AppConfig], _ body: @escaping (AppConfig, JobEnvironment) async throws -> Void
    ) async throws -> [Result] {
        var results: [Result] = []
        for app in apps {
            results.append(try await run(job: job, app: app, waitForLock: false) { try await body(app, $0) })
        }
        return results
    }
}
