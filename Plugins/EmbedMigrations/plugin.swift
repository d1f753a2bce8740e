import Foundation
import PackagePlugin

/// Embeds the package's `sql/*.sql` migrations into the target that uses this plugin, so the binary never needs
/// the source tree at run time. `sql/` stays the single source of the schema.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let sqlDirectory = context.package.directoryURL.appending(path: "sql")
        let names = try FileManager.default.contentsOfDirectory(atPath: sqlDirectory.path())
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        let inputs = names.map { sqlDirectory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(names.count) SQL migrations",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path()] + inputs.map { $0.path() },
                inputFiles: inputs + [sqlDirectory],
                outputFiles: [output]
            )
        ]
    }
}
