import Foundation
import Postgres
import Reconciler

extension CommandRuntime {
    /// Writes `--metrics-file` for node_exporter's textfile collector, atomically (a temporary file renamed into
    /// place, so the collector never reads half a file). Last-success times come from `job_run`, so they survive
    /// runs that fail.
    func writeMetrics(_ results: [JobRunner.Result]) throws {
        guard let path = options.metricsFile else { return }
        var text = ""
        func metric(_ name: String, _ help: String, _ type: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func labels(_ pairs: [(String, String)]) -> String {
            "{" + pairs.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        metric("storerecon_job_exit_code", "Exit code of the job's last run (0 ok, 75 continue later, 78, 1).", "gauge")
        for result in results {
            text += "storerecon_job_exit_code\(labels([("job", result.job), ("app", result.app)])) \(result.exitCode)\n"
        }
        metric("storerecon_job_duration_seconds", "How long the job's last run took.", "gauge")
        for result in results {
            text += "storerecon_job_duration_seconds\(labels([("job", result.job), ("app", result.app)])) "
            text += "\(String(format: "%.3f", result.seconds))\n"
        }
        metric("storerecon_job_rows", "Rows fetched, written and so on by the job's last run.", "gauge")
        for result in results {
            for (name, value) in result.counts.sorted(by: { $0.key < $1.key }) {
                text +=
                    "storerecon_job_rows\(labels([("job", result.job), ("app", result.app), ("kind", name)])) \(value)\n"
            }
        }
        metric(
            "storerecon_store_calls", "Store calls (and refusals, api ending in .refused) in the job's last run.",
            "gauge")
        for result in results {
            for (api, value) in result.calls.sorted(by: { $0.key < $1.key }) {
                text +=
                    "storerecon_store_calls\(labels([("job", result.job), ("app", result.app), ("api", api)])) \(value)\n"
            }
        }
        metric("storerecon_job_last_success_timestamp_seconds", "When the job last finished ok.", "gauge")
        let connection = try connect()
        defer { connection.close() }
        let rows = try connection.query(
            """
            SELECT job, app_id, extract(epoch FROM max(finished_at))::bigint AS at
            FROM job_run WHERE outcome = 'ok' AND app_id IS NOT NULL GROUP BY job, app_id ORDER BY job, app_id
            """)
        for row in rows {
            let job: String = try row.decode("job")
            let app: String = try row.decode("app_id")
            let at: Int64 = try row.decode("at")
            text += "storerecon_job_last_success_timestamp_seconds\(labels([("job", job), ("app", app)])) \(at)\n"
        }
        metric(
            "storerecon_quarantined_rows",
            "Store rows set aside because they cannot be stored, not yet retried or dropped (storerecon quarantine).",
            "gauge")
        var quarantined: [String: [String: Int]] = [:]
        for open in try Quarantine.openCounts(app: nil, on: connection) {
            quarantined[open.app, default: [:]][open.job] = open.rows
        }
        // Every configured app and job has a series (0 when nothing is quarantined), so an alert can say `> 0`.
        for app in configuration.apps {
            let jobs: [QuarantinedRow.Job] =
                app.platform == .google ? [.googleVoided, .recheck] : [.appleRefunds, .appleNotifications, .recheck]
            for job in jobs {
                let count = quarantined[app.id]?[job.rawValue] ?? 0
                text += "storerecon_quarantined_rows\(labels([("app", app.id), ("job", job.rawValue)])) \(count)\n"
            }
        }
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).tmp")
        try Data(text.utf8).write(to: temporary)
        if rename(temporary.path, target.path) != 0 {
            throw ReconcilerError(.failed, "--metrics-file \(path): cannot move the new file into place")
        }
    }

    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
