import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciler

/// What every command needs: logging set up, the configuration loaded, a database connection, and one place that
/// turns errors into a single line for the operator and an exit code (``ExitStatus``).
struct CommandRuntime {
    let options: GlobalOptions
    /// `--dry-run` of a job command: call the stores, write nothing.
    let dryRun: Bool
    let configuration: Configuration
    let configPath: String
    var logger: Logger
    /// What the command's jobs did, for `--metrics-file`.
    let record: RunRecord
    /// A job command's SIGTERM / SIGINT handling, installed when the command starts.
    let shutdown: ShutdownSignal?

    /// Sets up logging, loads the configuration and runs `body`, mapping any error to one line and an exit code
    /// (``ExitStatus/classify(_:)``). With `--metrics-file`, the file is written however the command ends.
    static func run(
        _ options: GlobalOptions, jobs: JobOptions? = nil, command: String,
        _ body: (CommandRuntime) async throws -> Void
    ) async throws {
        let level = Logger.Level(rawValue: options.logLevel.lowercased()) ?? .info
        let format = options.logFormat
        LoggingSystem.bootstrap { label in
            StderrLogHandler(label: label, format: format, logLevel: options.quiet ? max(level, .warning) : level)
        }
        var logger = Logger(label: "storerecon")
        logger[metadataKey: "command"] = "\(command)"
        guard Logger.Level(rawValue: options.logLevel.lowercased()) != nil else {
            logger.error("--log-level: expected one of trace, debug, info, notice, warning, error, critical")
            throw ExitCode(ExitStatus.usage)
        }
        let record = RunRecord()
        // A job command handles SIGTERM / SIGINT from its start: a signal during its setup (the configuration, the
        // database, the apps' rows) stops its jobs before their first store call, exit 75 with the metrics file
        // written, instead of killing the process.
        let shutdown = jobs.map { _ in ShutdownSignal() }
        shutdown?.install(logger: logger)
        var configuration: Configuration?
        var code = ExitStatus.ok
        do {
            let loader = ConfigurationLoader()
            let path = loader.resolvePath(explicit: options.config)
            let loaded = try loader.load(path: path, origin: loader.origin(explicit: options.config))
            configuration = loaded
            let runtime = CommandRuntime(
                options: options, dryRun: jobs?.dryRun ?? false, configuration: loaded, configPath: path,
                logger: logger, record: record, shutdown: shutdown)
            // Every command's statements (a report's queries, an import's COPY, `migrate` waiting for another
            // host's lock) block a thread of their own, never one of Swift's shared pool.
            try await DatabaseThreads.run { try await body(runtime) }
            code = ExitStatus.worst(record.results.map(\.exitCode))
        } catch let error as ExitCode {
            code = error.rawValue
        } catch {
            let (classified, line) = describe(error)
            logger.error("\(line)")
            code = classified
        }
        if let path = jobs?.metricsFile {
            let metrics = MetricsFile(path: path, command: command, logger: logger)
            do {
                let conninfo = configuration?.database.url
                try await DatabaseThreads.run { try metrics.write(record: record, exitCode: code, conninfo: conninfo) }
            } catch {
                logger.error("\(ExitStatus.classify(error).line)")
                // An unwritable file is a failure (1) whatever the run did: the worst code wins.
                code = ExitStatus.worst([code, ExitStatus.failed])
            }
        }
        if code != ExitStatus.ok { throw ExitCode(code) }
    }

    /// The exit code and one line for an error (``ExitStatus/classify(_:)``; a command-line validation error is 64).
    static func describe(_ error: any Error) -> (Int32, String) {
        if let error = error as? ValidationError { return (ExitStatus.usage, ExitStatus.oneLine(error.message)) }
        return ExitStatus.classify(error)
    }

    /// Opens the database named by the configuration (`STORERECON_DATABASE_URL` already applied).
    func connect() throws -> PostgresConnection {
        try PostgresConnection(conninfo: configuration.database.url)
    }

    /// Restricts the configured apps to `--app ID`, failing with exit 64 (a wrong command line) for an unknown id.
    func apps(matching id: String?) throws -> [AppConfig] {
        guard let id else { return configuration.apps }
        guard let app = configuration.app(id) else {
            let known = configuration.apps.map(\.id).joined(separator: ", ")
            throw ReconcilerError(.usage, "--app \(id): no such app in \(configPath) (configured: \(known))")
        }
        return [app]
    }

    /// The apps a command reads (`include`), or the one `--app` names: one the command does not read is a usage
    /// error (`why` says what it lacks), rather than a run that does nothing and exits 0.
    func apps(
        matching id: String?, _ include: (AppConfig) -> Bool, otherwise why: (AppConfig) -> String
    ) throws -> [AppConfig] {
        let apps = try apps(matching: id)
        let included = apps.filter(include)
        if id != nil, let app = apps.first, included.isEmpty {
            throw ReconcilerError(.usage, "--app \(app.id): \(why(app)); this command has nothing to do for it")
        }
        return included
    }

    /// The apps of one platform, or the one `--app` names when it is of that platform.
    func apps(matching id: String?, platform: AppConfig.Platform) throws -> [AppConfig] {
        try apps(matching: id, { $0.platform == platform }) {
            "its platform is \($0.platform.rawValue), and this command reads \(platform.rawValue) apps"
        }
    }
}

/// The job results of one command, collected for the metrics file.
final class RunRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var storedResults: [JobRunner.Result] = []

    /// The results so far.
    var results: [JobRunner.Result] { lock.withLock { storedResults } }

    func add(_ results: [JobRunner.Result]) { lock.withLock { storedResults += results } }
}
