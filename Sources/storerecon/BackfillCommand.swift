import ArgumentParser
import Foundation
import Postgres
import Reconciler

/// `storerecon backfill ...`.
struct BackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Re-read an explicit window or customer list, within the backfill share of the daily budget.",
        subcommands: [BackfillGoogleVoidedCommand.self]
    )
}

/// `storerecon backfill google-voided --since T [--until T] [--app ID]`.
struct BackfillGoogleVoidedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "google-voided",
        abstract: "Re-read Google voided purchases recorded in [--since, --until] (at most the last 30 days).",
        discussion: """
            Uses at most sync.backfillShare of the daily quota, so tonight's sync still has its share. Resumable: \
            run the same command again after an interruption and it continues from the last stored page.
            Example: storerecon backfill google-voided --since 2026-11-01T00:00:00Z --until 2026-11-08T00:00:00Z
            """
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Start of the window (RFC 3339, e.g. 2026-11-01T00:00:00Z).")
    var since: String

    @Option(name: .long, help: "End of the window (RFC 3339; default now).")
    var until: String?

    @Option(name: .long, help: "Only this app (default: every Google app).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, command: "backfill google-voided") { runtime in
            guard let start = PostgresTimestamp.parse(since) else {
                throw ReconcilerError(.input, "--since: expected an RFC 3339 time such as 2026-11-01T00:00:00Z")
            }
            var end: Date?
            if let until {
                guard let parsed = PostgresTimestamp.parse(until) else {
                    throw ReconcilerError(.input, "--until: expected an RFC 3339 time such as 2026-11-08T00:00:00Z")
                }
                guard parsed > start else { throw ReconcilerError(.input, "--until must be after --since") }
                end = parsed
            }
            let apps = try runtime.apps(matching: app).filter { $0.platform == .google }
            try await runtime.runJobs(GoogleVoidedSync.backfillJob, apps: apps) { app, environment in
                let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                _ = try await GoogleVoidedSync(app: app, configuration: runtime.configuration, client: client)
                    .run(.backfill(since: start, until: end), in: environment)
            }
        }
    }
}
