import ArgumentParser

/// storerecon: reconciles App Store and Google Play refunds and subscription states into PostgreSQL.
@main
struct StoreRecon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storerecon",
        abstract: "Reconcile App Store and Google Play refunds and subscription states into PostgreSQL.",
        discussion: """
            Exit codes: 0 done; 75 stopped early (quota or a retryable outage), progress saved, run again later;
            78 bad configuration; 1 anything else.
            """,
        version: "0.1.0",
        subcommands: [
            MigrateCommand.self, RunCommand.self, SyncCommand.self, BackfillCommand.self, ImportCommand.self,
            ReportCommand.self,
            StatusCommand.self,
            RecheckCommand.self,
            QuarantineCommand.self,
        ]
    )
}
