import ArgumentParser
import Foundation
import Logging
import Postgres
import Reconciler

/// What every command needs: logging set up, the configuration loaded, a database connection, and one place that
/// turns errors into a single line for the operator and an exit code.
struct CommandRuntime {
    let options: GlobalOptions
    let configuration: Configuration
    let configPath: String
    var logger: Logger

    /// Sets up logging, loads the configuration and runs `body`, mapping any error to one line and an exit code:
    /// 78 configuration, 75 temporary (quota, retryable outage, lost database), 1 anything else.
    static func run(_ options: GlobalOptions, command: String, _ body: (CommandRuntime) async throws -> Void)
        async throws
    {
        let level = Logger.Level(rawValue: options.logLevel.lowercased()) ?? .info
        let format = options.logFormat
        LoggingSystem.bootstrap { label in
            StderrLogHandler(label: label, format: format, logLevel: options.quiet ? max(level, .warning) : level)
        }
        var logger = Logger(label: "storerecon")
        logger[metadataKey: "command"] = "\(command)"
        guard Logger.Level(rawValue: options.logLevel.lowercased()) != nil else {
            logger.error("--log-level: expected one of trace, debug, info, notice, warning, error, critical")
            throw ExitCode(78)
        }
        do {
            let loader = ConfigurationLoader()
            let path = loader.resolvePath(explicit: options.config)
            let configuration = try loader.load(path: path)
            try await body(
                CommandRuntime(options: options, configuration: configuration, configPath: path, logger: logger))
        } catch let error as ExitCode {
            throw error
        } catch {
            let (code, line) = describe(error)
            logger.error("\(line)")
            throw ExitCode(code)
        }
    }

    static func describe(_ error: any Error) -> (Int32, String) {
        switch error {
        case let error as ReconcilerError:
            return (error.exitCode, error.message)
        case let error as PostgresError:
            // A database that went away can finish next run: 75, like a store outage.
            return (error.isRetryable ? 75 : 1, "\(error)")
        default:
            return (1, "\(error)")
        }
    }

    /// Opens the database named by the configuration (`STORERECON_DATABASE_URL` already applied).
    func connect() throws -> PostgresConnection {
        try PostgresConnection(conninfo: configuration.database.url)
    }

    /// Restricts the configured apps to `--app ID`, failing with exit 78 for an unknown id.
    func apps(matching id: String?) throws -> [AppConfig] {
        guard let id else { return configuration.apps }
        guard let app = configuration.app(id) else {
            let known = configuration.apps.map(\.id).joined(separator: ", ")
            throw ReconcilerError(.configuration, "--app \(id): no such app in \(configPath) (configured: \(known))")
        }
        return [app]
    }
}
