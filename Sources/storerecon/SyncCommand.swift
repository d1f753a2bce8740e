import ArgumentParser
import Foundation
import Reconciler

/// `storerecon sync ...`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Incremental pulls from the stores.",
        subcommands: [SyncGoogleVoidedCommand.self, SyncAppleRefundsCommand.self, SyncPayoutsCommand.self]
    )
}

/// `storerecon sync google-voided [--app ID]`.
struct SyncGoogleVoidedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "google-voided",
        abstract: "Pull Google Play voided purchases since the last checkpoint into the refund ledger.",
        discussion: """
            Window [checkpoint - sync.googleOverlap, now - sync.googleSkew], at most the 30 days Google keeps (an \
            older checkpoint is reported as a gap). Every page commits with its checkpoint; a quota answer stops \
            with exit 75 and the next run continues.
            Example: storerecon sync google-voided --app acme-android
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only this app (default: every Google app).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "sync google-voided") { runtime in
            let apps = try runtime.apps(matching: app, platform: .google)
            try await runtime.runJobs(GoogleVoidedSync.job, apps: apps) { app, environment in
                let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
                _ = try await GoogleVoidedSync(app: app, configuration: runtime.configuration, client: client)
                    .run(.incremental, in: environment)
            }
        }
    }
}

/// `storerecon sync apple-refunds [--app ID]`.
struct SyncAppleRefundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-refunds",
        abstract: "Learn refunded customers from Notification History, then read their refund history.",
        discussion: """
            Pages Notification History for REFUND, REFUND_REVERSED and REVOKE since the last checkpoint, reads the \
            refund history of every customer named (from its stored revision), then sweeps up to \
            sync.appleSweepCustomers other known customers, the longest unchecked first. Every signed payload is \
            verified against the configured root certificates before anything is stored.
            Example: storerecon sync apple-refunds --app acme-ios
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var jobs: JobOptions

    @Option(name: .long, help: "Only this app (default: every Apple app).")
    var app: String?

    func run() async throws {
        try await CommandRuntime.run(options, jobs: jobs, command: "sync apple-refunds") { runtime in
            let apps = try runtime.apps(matching: app, platform: .apple)
            try await runtime.runJobs(AppleRefundSync.job, apps: apps) { app, environment in
                let access = try StoreClients.apple(
                    for: app, configuration: runtime.configuration, gate: environment.gate, logger: environment.logger)
                try await AppleRefundSync(app: app, configuration: runtime.configuration, access: access)
                    .run(.incremental, in: environment)
            }
        }
    }
}
