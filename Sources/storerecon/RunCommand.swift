import ArgumentParser
import Foundation
import Logging
import Reconciler

/// `storerecon run ...`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scheduled work.",
        subcommands: [RunNightlyCommand.self]
    )
}

/// `storerecon run nightly [--app ID]`.
struct RunNightlyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightly",
        abstract: "Every job for every configured app: schema check, Google voided sync, Apple refund sync, recheck.",
        discussion: """
            Each job runs under its own advisory lock (another host running the same job: skipped with a line, or \
            waited for with nightly.onLocked: wait) and is recorded in job_run. One app's failure does not stop \
            the others; the exit code is the worst outcome (1, then 64, 78, 75, then 0). SIGTERM or SIGINT \
            finishes the page in hand, saves, and exits 75.
            Example (cron): storerecon run nightly --quiet --metrics-file /var/lib/node_exporter/storerecon.prom
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only this app.")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "run nightly") { runtime in
            let apps = try runtime.apps(matching: app)
            let connection = try runtime.connect()
            try Migrator(connection: connection).verifyCurrent()
            try AppRegistry.sync(runtime.configuration, on: connection)
            connection.close()
            let runner = runtime.jobRunner()
            let wait = runtime.configuration.nightly.onLocked == .wait
            var results: [JobRunner.Result] = []
            for app in apps {
                for job in NightlyPlan.jobs(for: app) {
                    if runner.shutdown.isRequested {
                        runtime.logger.warning("stopping: \(job.name) for \(app.id) not started")
                        results.append(
                            JobRunner.Result(
                                job: job.name, app: app.id, outcome: .partial, exitCode: ExitStatus.temporary,
                                error: "stopped by signal", counts: [:], calls: [:], seconds: 0))
                        runtime.record.add([results.last!])
                        continue
                    }
                    let result = try await runner.run(job: job.name, app: app, waitForLock: wait) { environment in
                        try await job.body(app, runtime.configuration, environment)
                    }
                    runtime.record.add([result])
                    results.append(result)
                }
            }
            for result in results {
                runtime.logger.info(
                    "\(result.app) \(result.job): \(result.outcome.rawValue) in \(String(format: "%.1f", result.seconds)) s"
                )
            }
            let worst = ExitStatus.worst(results.map(\.exitCode))
            if worst != 0 { throw ExitCode(worst) }
        }
    }
}

/// The nightly job list per platform, in order.
enum NightlyPlan {
    struct Job {
        var name: String
        var body: (AppConfig, Configuration, JobEnvironment) async throws -> Void
    }

    static func jobs(for app: AppConfig) -> [Job] {
        refundJobs(for: app) + [
            Job(name: ExpiryRecheck.job) { app, configuration, environment in
                let source = try ExpiryRecheck.source(for: app, configuration: configuration, environment: environment)
                try await ExpiryRecheck(
                    app: app, configuration: configuration, options: ExpiryRecheck.Options(configuration.recheck),
                    source: source
                ).run(in: environment)
            }
        ] + payoutJobs(for: app)
    }

    static func refundJobs(for app: AppConfig) -> [Job] {
        switch app.platform {
        case .google:
            return [
                Job(name: GoogleVoidedSync.job) { app, configuration, environment in
                    let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                    _ = try await GoogleVoidedSync(app: app, configuration: configuration, client: client)
                        .run(.incremental, in: environment)
                }
            ]
        case .apple:
            return [
                Job(name: AppleRefundSync.job) { app, configuration, environment in
                    let access = try StoreClients.apple(
                        for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
                    try await AppleRefundSync(app: app, configuration: configuration, access: access)
                        .run(.incremental, in: environment)
                }
            ]
        }
    }
}
