import ArgumentParser
import Foundation
import Postgres
import Reconciler

/// `storerecon backfill ...`.
struct BackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Re-read an explicit window or customer list, within the backfill share of the daily budget.",
        subcommands: [
            BackfillGoogleVoidedCommand.self, BackfillGoogleOrdersCommand.self, BackfillAppleRefundsCommand.self,
        ]
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
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Start of the window (RFC 3339, e.g. 2026-11-01T00:00:00Z).")
    var since: String

    @Option(name: .long, help: "End of the window (RFC 3339; default now).")
    var until: String?

    @Option(name: .long, help: "Only this app (default: every Google app).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "backfill google-voided") { runtime in
            let (start, end) = try CommandLineTime.window(since: since, until: until)
            let apps = try runtime.apps(matching: app, platform: .google)
            try await runtime.runJobs(GoogleVoidedSync.backfillJob, apps: apps) { app, environment in
                let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                _ = try await GoogleVoidedSync(app: app, configuration: runtime.configuration, client: client)
                    .run(.backfill(since: start, until: end), in: environment)
            }
        }
    }
}

/// `storerecon backfill google-orders [--since T] [--app ID]`.
struct BackfillGoogleOrdersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "google-orders",
        abstract: "Fetch the Orders API amounts of Google refunds already in the ledger (refunded since --since).",
        discussion: """
            Asks orders.batchget, 1000 orders a call, for every Google refund without the store's amount (never \
            fetched, or pending at Google), oldest first, within the backfill share of the daily budget. Resumable: \
            what is stored stays; run it again to continue.
            Example: storerecon backfill google-orders --since 2026-01-01T00:00:00Z
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only refunds from this time on (RFC 3339; default: all).")
    var since: String?

    @Option(name: .long, help: "Only this app (default: every Google app).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "backfill google-orders") { runtime in
            let start = try since.map(CommandLineTime.parseSince)
            let apps = try runtime.apps(matching: app, platform: .google)
            try await runtime.runJobs(GoogleOrderAmounts.backfillJob, apps: apps) { app, environment in
                let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                let summary = try await GoogleOrderAmounts(
                    app: app, client: client, prices: runtime.configuration.configuredPrices
                )
                .backfill(since: start, in: environment)
                if summary.stopped {
                    throw ReconcilerError(
                        .temporary, "stopped before the end (quota, permission or outage); run again to continue")
                }
            }
        }
    }
}

/// `storerecon backfill apple-refunds [--all | --ids FILE | --status | --cancel] [--app ID]`.
struct BackfillAppleRefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-refunds",
        abstract: "Read the refund history of every known customer (--all) or of a list (--ids FILE).",
        discussion: """
            Uses at most sync.backfillShare of the daily budget. Resumable: customers already read keep their \
            revision, so a rerun after an interruption continues with the ones left; until then each nightly sync \
            reads at most sync.appleBackfillPerNight of them. --all skips customers read within \
            sync.appleRecheckAfter. --status shows how many customers the backfill queued, how many are done and \
            left, and when it started; --cancel drops the backfill's queue (everything stored stays).
            --ids FILE holds one original transaction id per line.
            Example: storerecon backfill apple-refunds --ids customers.txt --app acme-ios
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Flag(name: .long, help: "Every customer known from the subscription table.")
    var all = false

    @Option(name: .long, help: "A file with one original transaction id per line.")
    var ids: String?

    @Flag(name: .long, help: "Show the pending backfill: customers queued, done and left, and when it started.")
    var status = false

    @Flag(name: .long, help: "Drop the pending backfill's queue; refunds and revisions stored so far are kept.")
    var cancel = false

    @Option(name: .long, help: "Only this app (default: every Apple app).")
    var app: String?

    func run() async throws {
        // --status and --cancel run no job: no job options, so SIGINT stops them as any other command.
        let jobs = status || cancel ? nil : self.jobs
        try await CommandRuntime.run(options, jobs: jobs, command: "backfill apple-refunds") { runtime in
            if status || cancel {
                guard !(status && cancel), !all, ids == nil else {
                    throw ReconcilerError(.usage, "--status and --cancel go alone (with --app at most)")
                }
                let connection = try runtime.connect()
                defer { connection.close() }
                for app in try runtime.apps(matching: app, platform: .apple) {
                    if cancel {
                        let dropped = try AppleBackfillProgress.cancel(app: app.id, on: connection)
                        print(
                            "\(app.id): backfill canceled, \(dropped) queued customers dropped; everything stored is kept"
                        )
                    } else {
                        print(Self.describe(app.id, try AppleBackfillProgress.load(app: app.id, on: connection)))
                    }
                }
                return
            }
            let mode: AppleRefundSync.Mode
            switch (all, ids) {
            case (true, nil):
                mode = .backfillAll
            case (false, .some(let path)):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ReconcilerError(.input, "--ids \(path): cannot read the file")
                }
                let list = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
                if let bad = list.first(where: { !$0.allSatisfy(\.isNumber) || $0.count > 32 }) {
                    throw ReconcilerError(.input, "--ids \(path): \"\(bad.prefix(40))\" is not a transaction id")
                }
                mode = .backfillIds(list)
            default:
                throw ReconcilerError(.usage, "give exactly one of --all or --ids FILE")
            }
            let apps = try runtime.apps(matching: app, platform: .apple)
            try await runtime.runJobs(AppleRefundSync.backfillJob, apps: apps) { app, environment in
                let access = try StoreClients.apple(
                    for: app, configuration: runtime.configuration, gate: environment.gate, logger: environment.logger)
                try await AppleRefundSync(app: app, configuration: runtime.configuration, access: access)
                    .run(mode, in: environment)
            }
        }
    }
}

extension BackfillAppleRefundsCommand {
    /// One line of `--status`.
    static func describe(_ app: String, _ progress: AppleBackfillProgress?) -> String {
        guard let progress else { return "\(app): no backfill started" }
        let state =
            progress.canceledAt.map { "canceled \(PostgresTimestamp.millis($0))" }
            ?? progress.finishedAt.map { "finished \(PostgresTimestamp.millis($0))" } ?? "pending"
        return "\(app): backfill started \(PostgresTimestamp.millis(progress.startedAt)), \(state): "
            + "\(progress.queued) customers queued, \(progress.done) done, \(progress.left) left"
    }
}
