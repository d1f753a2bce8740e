import ArgumentParser
import Postgres

/// storerecon: reconciles App Store and Google Play refunds and subscription states into PostgreSQL.
@main
struct StoreRecon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storerecon",
        abstract: "Reconcile App Store and Google Play refunds and subscription states into PostgreSQL.",
        discussion: """
            Exit codes: 0 done; 75 stopped early (quota, a retryable store or database outage), progress saved, \
            run again later; 78 bad configuration or credentials (including a database.url that cannot work); \
            64 a wrong command line (malformed or impossible date, unknown --by column, duration without a unit); \
            1 anything else.
            Durations: a whole number and s, m, h, d or w (90s, 30m, 72h, 2d, 1w). Dates: YYYY-MM-DD.
            Configuration: --config FILE, else $STORERECON_CONFIG, else ./storerecon.yaml.
            Global options (every command): --config FILE, --log-format text|json, --log-level LEVEL (info),             --quiet (warnings that need action only). The commands that call the stores (run, sync, backfill,             recheck) also take --dry-run (call the stores within quota, write nothing) and --metrics-file FILE             (Prometheus textfile). See storerecon help COMMAND.
            """,
        version: "0.1.0",
        subcommands: [
            MigrateCommand.self, RunCommand.self, SyncCommand.self, BackfillCommand.self, ImportCommand.self,
            ReportCommand.self,
            StatusCommand.self,
            RecheckCommand.self,
            QuarantineCommand.self,
            PayoutsCommand.self,
            QuotaCommand.self,
            GapsCommand.self,
        ]
    )

    /// Bounds the malloc arenas (``DatabaseThreads/boundMallocArenas()``) before any thread starts, then runs the
    /// command.
    static func main() async {
        DatabaseThreads.boundMallocArenas()
        await main(nil)
    }
}
