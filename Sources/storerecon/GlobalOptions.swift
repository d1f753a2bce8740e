import ArgumentParser

/// Options every command takes (the top level's help lists them too).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: $STORERECON_CONFIG, else ./storerecon.yaml).")
    var config: String?

    @Option(name: .long, help: "Log line format: text or json.")
    var logFormat: LogFormat = .text

    @Option(name: .long, help: "Lowest log level shown: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Flag(name: .long, help: "Only warnings and errors on stderr, and no progress display.")
    var quiet = false
}

/// Options of the commands that run store jobs (`run`, `sync`, `backfill`, `recheck`).
struct JobOptions: ParsableArguments {
    @Flag(name: .long, help: "Call the stores (within quota) but write nothing; say what would have been written.")
    var dryRun = false

    @Option(
        name: .long, help: "Write Prometheus metrics of the run to this file (for node_exporter's textfile collector).")
    var metricsFile: String?
}

/// How log lines are written to stderr.
enum LogFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case text, json
}
