import Foundation
import Ledger
import Logging
import Postgres
import Reconciler

/// `--metrics-file` for node_exporter's textfile collector.
///
/// Written at the end of every command that was given the option, however it ended (a configuration error, a
/// database that went away, an empty database): the run-level `storerecon_run_exit_code` and
/// `storerecon_run_finished_timestamp_seconds` always tell the truth about the last run of each command. The file
/// is written atomically (a temporary file renamed into place, so the collector never reads half a file) and mode
/// 0644 whatever the umask (the shipped units run with `UMask=0077`; node_exporter is another user).
///
/// Job-level series are merged with the file already there: only the series of the jobs (per app) this run ran are
/// replaced, so a run for one `--app`, one `sync` command or a command that failed before its jobs keeps the other
/// series as they were. Last-success times come from `job_run`, so they
/// survive runs that fail; when the database cannot be read, the previous values are kept.
struct MetricsFile {
    let path: String
    let command: String
    let logger: Logger

    /// The metrics this file holds, in order: name, help, and whether its series belong to an app.
    static let families: [(name: String, help: String, perApp: Bool)] =
        [
            (
                "storerecon_run_exit_code",
                "Exit code of the command's last run (0 ok, 1 failed, 64 usage, 75 continue later, 78 configuration).",
                false
            ),
            ("storerecon_run_finished_timestamp_seconds", "When the command's last run ended (Unix time).", false),
            (
                "storerecon_job_exit_code",
                "Exit code of the job's last run (0 ok, 1 failed, 75 continue later, 78 configuration).", true
            ),
            ("storerecon_job_duration_seconds", "How long the job's last run took.", true),
            ("storerecon_job_rows", "Rows fetched, written and so on by the job's last run.", true),
            (
                "storerecon_store_calls",
                "Store calls in the job's last run; api ending in .throttled: answers where the store throttled or refused the day's quota.",
                true
            ),
            ("storerecon_job_last_success_timestamp_seconds", "When the job last finished ok (Unix time).", true),
            (
                "storerecon_quarantined_rows",
                "Store rows set aside because they cannot be stored, not yet retried or dropped (storerecon quarantine).",
                true
            ),
        ] + refundRequestFamilies

    /// Reads the file, replaces this run's series and writes it back, under an exclusive lock on `<path>.lock`: two
    /// runs ending together (the nightly run and a refund-requests run) would otherwise each write back the file as
    /// they read it, and the later one would undo the other's series. The database is read before the lock is taken.
    func write(record: RunRecord, exitCode: Int32, conninfo: String?, now: Date = Date()) throws {
        let fromDatabase = DatabaseSamples(
            lastSuccess: conninfo.flatMap { lastSuccessSamples(conninfo: $0) },
            quarantined: conninfo.flatMap { quarantineSamples(conninfo: $0) },
            requests: conninfo.flatMap { refundRequestSamples(conninfo: $0, now: now) })
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        // Without a lock file (a directory storerecon cannot write) the rename below says why.
        defer { if lock >= 0 { close(lock) } }
        while lock >= 0, flock(lock, LOCK_EX) != 0, errno == EINTR {}
        try merge(record: record, exitCode: exitCode, fromDatabase, now: now)
    }

    /// The series read from the database, each nil when it could not be read (the previous file's are kept).
    private struct DatabaseSamples {
        var lastSuccess: [String]?
        var quarantined: [String]?
        var requests: [String: [String]]?
    }

    private func merge(record: RunRecord, exitCode: Int32, _ fromDatabase: DatabaseSamples, now: Date) throws {
        var samples: [String: [String]] = [:]
        for family in Self.families { samples[family.name] = [] }
        // No file yet is an empty one; a file that cannot be read is an error: rewriting it without the other
        // commands' series would silence their alerts.
        let existing =
            FileManager.default.fileExists(atPath: path) ? try String(contentsOfFile: path, encoding: .utf8) : ""
        // A job skipped for another process's lock did not run: its series stay as that process (or the last run)
        // wrote them, or a failure written there would read 0 until the job next runs.
        let ran = record.results.filter { $0.outcome != .skipped }
        let replaced = Set(ran.map { "\($0.job)\u{0}\($0.app)" })
        let (lastSuccess, quarantined, requests) =
            (fromDatabase.lastSuccess, fromDatabase.quarantined, fromDatabase.requests)
        for line in existing.split(separator: "\n") where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            guard let family = Self.families.first(where: { $0.name == name }) else { continue }
            if family.name == "storerecon_job_last_success_timestamp_seconds" {
                if lastSuccess == nil { samples[name]!.append(String(line)) }
            } else if family.name == "storerecon_quarantined_rows" {
                if quarantined == nil { samples[name]!.append(String(line)) }
            } else if Self.refundRequestFamilies.contains(where: { $0.name == name }) {
                if requests == nil { samples[name]!.append(String(line)) }
            } else if family.perApp {
                let key = "\(Self.label("job", in: line) ?? "")\u{0}\(Self.label("app", in: line) ?? "")"
                if !replaced.contains(key) { samples[name]!.append(String(line)) }
            } else if Self.label("command", in: line) != command {
                samples[name]!.append(String(line))
            }
        }
        let commandLabel = Self.labels([("command", command)])
        samples["storerecon_run_exit_code"]!.append("storerecon_run_exit_code\(commandLabel) \(exitCode)")
        samples["storerecon_run_finished_timestamp_seconds"]!.append(
            "storerecon_run_finished_timestamp_seconds\(commandLabel) \(Int64(now.timeIntervalSince1970))")
        for result in ran {
            let job = Self.labels([("job", result.job), ("app", result.app)])
            samples["storerecon_job_exit_code"]!.append("storerecon_job_exit_code\(job) \(result.exitCode)")
            samples["storerecon_job_duration_seconds"]!.append(
                "storerecon_job_duration_seconds\(job) \(String(format: "%.3f", result.seconds))")
            for (kind, value) in result.counts.sorted(by: { $0.key < $1.key }) {
                let labels = Self.labels([("job", result.job), ("app", result.app), ("kind", kind)])
                samples["storerecon_job_rows"]!.append("storerecon_job_rows\(labels) \(value)")
            }
            for (api, value) in result.calls.sorted(by: { $0.key < $1.key }) {
                let labels = Self.labels([("job", result.job), ("app", result.app), ("api", api)])
                samples["storerecon_store_calls"]!.append("storerecon_store_calls\(labels) \(value)")
            }
        }
        if let lastSuccess { samples["storerecon_job_last_success_timestamp_seconds"]! += lastSuccess }
        if let quarantined { samples["storerecon_quarantined_rows"]! += quarantined }
        for (name, lines) in requests ?? [:] { samples[name]! += lines }
        var text = ""
        for family in Self.families {
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) gauge\n"
            for sample in Self.unique(samples[family.name]!) { text += sample + "\n" }
        }
        try Self.writeAtomically(text, to: path)
    }

    /// `job_run`'s last successful finish per job and app, or nil when the database cannot be read.
    private func lastSuccessSamples(conninfo: String) -> [String]? {
        do {
            let connection = try PostgresConnection(conninfo: conninfo)
            defer { connection.close() }
            let rows = try connection.query(
                """
                SELECT job, app_id, extract(epoch FROM max(finished_at))::bigint AS at
                FROM job_run WHERE outcome = 'ok' AND app_id IS NOT NULL GROUP BY job, app_id ORDER BY job, app_id
                """)
            return try rows.map { row in
                let labels = Self.labels([("job", try row.decode("job")), ("app", try row.decode("app_id"))])
                return "storerecon_job_last_success_timestamp_seconds\(labels) \(try row.decode("at", as: Int64.self))"
            }
        } catch {
            logger.debug(
                "--metrics-file: last-success times kept from the previous file: \(ExitStatus.classify(error).line)")
            return nil
        }
    }

    /// Open quarantined rows per app and job, every app and job of the database present (0 when none, so an alert
    /// can say `> 0`), or nil when the database cannot be read.
    private func quarantineSamples(conninfo: String) -> [String]? {
        do {
            let connection = try PostgresConnection(conninfo: conninfo)
            defer { connection.close() }
            let rows = try connection.query(
                """
                SELECT a.id AS app_id, j.job, count(q.id) AS n
                FROM app a
                CROSS JOIN unnest($1::text[]) AS j(job)
                LEFT JOIN quarantine q ON q.app_id = a.id AND q.job = j.job AND q.resolved_at IS NULL
                WHERE a.platform = split_part(j.job, '_', 1)
                GROUP BY a.id, j.job ORDER BY a.id, j.job
                """, [PostgresTextArray(QuarantineJob.allCases.map(\.rawValue))])
            return try rows.map { row in
                let labels = Self.labels([("app", try row.decode("app_id")), ("job", try row.decode("job"))])
                return "storerecon_quarantined_rows\(labels) \(try row.decode("n", as: Int64.self))"
            }
        } catch {
            logger.debug(
                "--metrics-file: quarantine counts kept from the previous file: \(ExitStatus.classify(error).line)")
            return nil
        }
    }

    /// One sample per series (the last written wins), ordered by series.
    static func unique(_ samples: [String]) -> [String] {
        var bySeries: [String: String] = [:]
        for sample in samples {
            let series = sample.lastIndex(of: " ").map { String(sample[..<$0]) } ?? sample
            bySeries[series] = sample
        }
        return bySeries.keys.sorted().map { bySeries[$0]! }
    }

    static func labels(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
    }

    /// The value of label `name` in a sample line, unescaped.
    static func label(_ name: String, in line: Substring) -> String? {
        guard let start = line.range(of: "\(name)=\"") else { return nil }
        var value = ""
        var index = start.upperBound
        while index < line.endIndex, line[index] != "\"" {
            if line[index] == "\\", line.index(after: index) < line.endIndex {
                index = line.index(after: index)
                value.append(line[index] == "n" ? "\n" : line[index])
            } else {
                value.append(line[index])
            }
            index = line.index(after: index)
        }
        return value
    }

    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Writes `text` to a temporary file beside `path` with mode 0644 (set explicitly, so the umask does not
    /// matter), flushes it, and renames it into place.
    static func writeAtomically(_ text: String, to path: String) throws {
        let target = URL(fileURLWithPath: path)
        let temporary = target.deletingLastPathComponent()
            .appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp").path
        func failure(_ what: String) -> ReconcilerError {
            ReconcilerError(.failed, "--metrics-file \(path): \(what): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var ok = fchmod(descriptor, 0o644) == 0
        let bytes = Array(text.utf8)
        var written = 0
        while ok && written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { ok = false } else { written += count }
        }
        ok = ok && fsync(descriptor) == 0
        let error = failure("cannot write")
        close(descriptor)
        guard ok else {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot move the new file into place")
            unlink(temporary)
            throw error
        }
    }
}
