import ArgumentParser
import Foundation
import Reconciler

/// `storerecon status`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show what is behind: schema, configured apps, rows per table. Exit 1 when something needs attention.",
        discussion: "Example: storerecon status --format json"
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Only this app.")
    var app: String?

    @Option(name: .long, help: "Output format: table or json.")
    var format: StatusFormat = .table

    enum StatusFormat: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    func run() async throws {
        try await CommandRuntime.run(options, command: "status") { runtime in
            var configuration = runtime.configuration
            configuration.apps = try runtime.apps(matching: app)
            let connection = try runtime.connect()
            defer { connection.close() }
            let report = try StatusReport.gather(configuration, on: connection)
            switch format {
            case .json:
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            case .table:
                print(StatusTable.render(report))
            }
            if !report.attention.isEmpty { throw ExitCode(1) }
        }
    }
}

/// Renders a status report for a terminal.
enum StatusTable {
    static func render(_ report: StatusReport) -> String {
        var lines: [String] = []
        lines.append("database: reachable")
        lines.append(
            "schema: "
                + (report.schemaCurrent ? "current" : "PENDING \(report.pendingMigrations.joined(separator: ", "))"))
        if !report.apps.isEmpty {
            lines.append("")
            lines.append(row(["app", "platform", "store id", "subscriptions", "refunds"]))
            for app in report.apps {
                lines.append(row([app.id, app.platform, app.storeAppId, "\(app.subscriptions)", "\(app.refunds)"]))
            }
        }
        if !report.tableCounts.isEmpty {
            lines.append("")
            lines.append(row(["table", "rows"]))
            for table in report.tableCounts.keys.sorted() {
                lines.append(row([table, "\(report.tableCounts[table]!)"]))
            }
        }
        if !report.attention.isEmpty {
            lines.append("")
            for item in report.attention { lines.append("ATTENTION: \(item)") }
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ cells: [String]) -> String {
        cells.map { $0.padding(toLength: max(24, $0.count), withPad: " ", startingAt: 0) }.joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }
}
