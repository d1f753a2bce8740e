import ArgumentParser
import Foundation
import Postgres
import RateLimiting
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
            let gate = PostgresQuotaGate(
                conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock())
            var report = try await StatusReport.gather(
                configuration, on: connection, quotaUsage: { try await gate.usageToday(app: $0) },
                quotaBlocks: { try await gate.blocks(app: $0) })
            if report.schemaCurrent { try TieOutStatusReader.fill(&report, configuration, on: connection) }
            switch format {
            case .json:
                print(try StatusJSON.render(report))
            case .table:
                print(StatusTable.render(report))
            }
            if !report.attention.isEmpty { throw ExitCode(1) }
        }
    }
}

/// Renders a status report as JSON, times as RFC 3339 strings in UTC (`2026-11-22T04:32:50.123Z`).
enum StatusJSON {
    static func render(_ report: StatusReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(rfc3339(date))
        }
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    /// `2026-11-22T04:32:50.123Z`.
    static func rfc3339(_ date: Date) -> String {
        PostgresTimestamp.millis(date)
    }
}

extension StatusReport.Night {
    /// `night: ok, 2026-11-22T04:00:00.000Z – 04:12:03 (12 min)` or `night: running google_voided since ...`.
    var line: String {
        let start = StatusJSON.rfc3339(startedAt)
        let never = neverRun.isEmpty ? "" : "; never run: \(neverRun.joined(separator: ", "))"
        guard let finishedAt else {
            let age = Int(Date().timeIntervalSince(startedAt))
            return
                "night: running \(running.joined(separator: ", ")) (started \(start), \(StatusTable.age(age)) ago)\(never)"
        }
        let seconds = Int(finishedAt.timeIntervalSince(startedAt))
        let took = seconds < 120 ? "\(seconds) s" : "\(seconds / 60) min"
        return "night: \(outcome), \(start) – \(StatusJSON.rfc3339(finishedAt)) (\(took))\(never)"
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
        for app in report.apps {
            lines.append("")
            lines.append("\(app.id):")
            lines += (syncLines(app) + quotaLines(app) + ledgerLines(app)).map { "  " + $0 }
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

    /// An app's sync checkpoints and the gaps its syncs could not fetch.
    static func syncLines(_ app: StatusReport.AppStatus) -> [String] {
        var lines: [String] = []
        for checkpoint in app.checkpoints {
            let behind = checkpoint.behindSeconds.map { "\(age($0)) behind" } ?? "never run"
            let flight = checkpoint.inFlight ? ", window in flight after \(checkpoint.pagesDone) pages" : ""
            lines.append("checkpoint \(checkpoint.job): \(behind)\(flight)")
        }
        for gap in app.gaps {
            lines.append(
                "GAP #\(gap.id) \(gap.job): \(StatusJSON.rfc3339(gap.from)) – \(StatusJSON.rfc3339(gap.to)) "
                    + "could not be fetched")
        }
        return lines
    }

    /// An app's quota use today and the APIs blocked.
    static func quotaLines(_ app: StatusReport.AppStatus) -> [String] {
        var lines: [String] = []
        for usage in app.quotaToday {
            let cap = usage.cap.map { " of \($0)" } ?? ""
            lines.append(
                "quota today \(usage.api): \(usage.used)\(cap) used (\(usage.usedBackfill) backfill), "
                    + "\(usage.heldBack) held back, \(usage.throttled) throttled"
                    + (usage.exhausted ? ", EXHAUSTED" : "")
            )
        }
        for block in app.quotaBlocks {
            let lift =
                block.kind == .capReached
                ? "raise the cap in the configuration's limits"
                : "lift: storerecon quota clear --app \(app.id) --api \(block.api)"
            lines.append(
                "BLOCKED \(block.api) until \(StatusJSON.rfc3339(block.until)): \(block.reason) (\(lift))")
        }
        return lines
    }

    /// An app's rows set aside, last night, tie-out, last runs, subscriptions and refund amounts.
    static func ledgerLines(_ app: StatusReport.AppStatus) -> [String] {
        var lines: [String] = []
        for open in app.quarantined {
            lines.append(
                "QUARANTINED \(open.job): \(open.rows) rows, last met \(StatusJSON.rfc3339(open.lastSeen))")
        }
        if let night = app.night { lines.append(night.line) }
        if let requests = app.refundRequests {
            lines.append(
                "refund requests: \(requests.waiting) waiting"
                    + (requests.nearestDeadline.map { ", nearest deadline \(StatusJSON.rfc3339($0))" } ?? "")
                    + ", \(requests.missedLastDay) missed in the last day")
        }
        if let tieOut = app.tieOut {
            lines.append(
                "tie-out \(tieOut.month): \(tieOut.lines) lines, \(tieOut.differing) not matched, "
                    + "\(tieOut.withoutCause) without a cause "
                    + "(storerecon report tie-out --month \(tieOut.month) --detail)")
        }
        for run in app.lastRuns {
            // A finished run is shown at its end ("ok at" the time it finished), one never finished at its start.
            if let outcome = run.outcome {
                lines.append(
                    "last \(run.job): \(outcome) at \(StatusJSON.rfc3339(run.finishedAt ?? run.startedAt))")
            } else {
                lines.append(
                    "last \(run.job): running or crashed, started at \(StatusJSON.rfc3339(run.startedAt))")
            }
        }
        for state in app.subscriptionStates {
            // The JSON's names, with a gloss where the name alone would mislead.
            let name = state.state == "unknown" ? "unknown (not checked yet)" : state.state
            lines.append("subscriptions \(name)\(state.entitled ? " (entitled)" : ""): \(state.count)")
        }
        if app.refunds > 0, !app.refundAmounts.isEmpty {
            func counts(_ names: [String]) -> String {
                names.map { "\($0) \(app.refundAmounts[$0] ?? 0)" }.joined(separator: ", ")
            }
            lines.append(
                "refund amounts of \(app.refunds): \(counts(StatusReport.amountBuckets)); "
                    + "of the unknown or estimated: \(counts(StatusReport.amountNotes))")
        }
        return lines
    }

    /// An age: hours and minutes up to 48 h, whole days (and hours) past it.
    static func age(_ seconds: Int) -> String {
        guard seconds > 48 * 3600 else { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        let hours = seconds % 86_400 / 3600
        return "\(seconds / 86_400) days" + (hours > 0 ? " \(hours) h" : "")
    }

    private static func row(_ cells: [String]) -> String {
        cells.map { $0.padding(toLength: max(24, $0.count), withPad: " ", startingAt: 0) }.joined(separator: " ")
            .trimmingCharacters(in: .whitespaces)
    }
}
