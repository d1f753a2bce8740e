import ArgumentParser
import Foundation
import Reconciler

/// `storerecon gaps acknowledge ID`.
struct GapsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gaps",
        abstract: "Windows a store no longer keeps: acknowledge one once it is dealt with.",
        subcommands: [Acknowledge.self]
    )

    struct Acknowledge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "acknowledge",
            abstract: "Mark a gap (status: GAP #ID) as dealt with, so status stops reporting it.",
            discussion: "Example: storerecon gaps acknowledge 3   (see the Runbook, \"A gap\")")

        @OptionGroup var options: GlobalOptions
        @Argument(help: "The gap's id, as status prints it (GAP #ID).") var id: Int64

        func run() async throws {
            try await CommandRuntime.run(options, command: "gaps acknowledge") { runtime in
                let connection = try runtime.connect()
                defer { connection.close() }
                guard let gap = try SyncGap.acknowledge(id: id, on: connection) else {
                    throw ReconcilerError(.input, "gap #\(id): no open gap has that id (see storerecon status)")
                }
                print("gap #\(id) (\(gap.job), \(gap.app)) acknowledged")
            }
        }
    }
}
