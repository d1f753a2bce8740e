import ArgumentParser
import Foundation
import Logging
import Reconciler

/// `storerecon run ...`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scheduled work.",
        subcommands: [RunNightlyCommand.self, RunRefundRequestsCommand.self]
    )
}

/// `storerecon run nightly [--app ID]`.
struct RunNightlyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightly",
        abstract:
            "Every job for every configured app, the apps side by side: schema check, then per app its jobs in order.",
        discussion: """
            Google apps: voided sync, recheck, then the known orders re-read for refunds made without revocation; \
            Apple apps: refund sync, then recheck. Every app starts at once, within nightly.concurrency database \
            connections; an app whose night passes nightly.appTimeout is stopped (progress saved, exit 75) without \
            holding up the others. Each job runs under its own advisory lock (another host running the same job: \
            skipped with a line, or waited for with nightly.onLocked: wait) and is recorded in job_run; each app \
            ends with one summary line. The exit code is the worst outcome (1, then 64, 78, 75, then 0). SIGTERM \
            or SIGINT finishes the page in hand, saves, and exits 75.
            Example (cron): storerecon run nightly --quiet --metrics-file /var/lib/node_exporter/textfile/storerecon.prom
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
            if !runtime.dryRun {
                let retention = runtime.configuration.refundRequests.retention
                let purged = try ConsumptionFactStore.purge(retention: retention, now: Date(), on: connection)
                if purged > 0 { runtime.logger.info("purged \(purged) consumption facts older than \(retention)") }
            }
            let concurrency =
                try runtime.configuredConcurrency()
                ?? NightlyFleet.defaultConcurrency(
                    freeConnections: NightlyFleet.freeConnections(on: connection),
                    cores: ProcessInfo.processInfo.activeProcessorCount)
            connection.close()
            runtime.logger.info(
                "\(apps.count) app\(apps.count == 1 ? "" : "s") side by side within \(concurrency) database connections"
            )
            let record = runtime.record
            let fleet = NightlyFleet(
                runner: runtime.jobRunner(), budget: ConnectionBudget(total: concurrency), record: { record.add([$0]) })
            let results = await fleet.run(apps: apps)
            let worst = ExitStatus.worst(results.map(\.exitCode))
            if worst != 0 { throw ExitCode(worst) }
        }
    }
}
