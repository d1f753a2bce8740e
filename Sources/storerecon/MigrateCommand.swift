import ArgumentParser
import Reconciler

/// `storerecon migrate`.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations (idempotent; one process at a time under an advisory lock).",
        discussion: "Example: storerecon migrate --config /etc/storerecon/storerecon.yaml"
    )

    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "List the migrations that would be applied; apply none.")
    var dryRun = false

    func run() async throws {
        try await CommandRuntime.run(options, command: "migrate") { runtime in
            let connection = try runtime.connect()
            defer { connection.close() }
            if dryRun {
                let pending = try Migrator(connection: connection).pendingNames()
                runtime.logger.info(
                    "dry run: would apply \(pending.isEmpty ? "nothing" : pending.joined(separator: ", "))")
                return
            }
            let applied = try Migrator(connection: connection).migrate()
            try AppRegistry.sync(runtime.configuration, on: connection)
            if applied.isEmpty {
                runtime.logger.info("schema is current; nothing to apply")
            } else {
                runtime.logger.info("applied \(applied.joined(separator: ", "))")
            }
        }
    }
}
