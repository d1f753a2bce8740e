import Foundation
import Postgres

/// Records one run of one job in `job_run`: started when created, finished with an outcome, counts and calls per
/// store API. Uses its own short statements (autocommit), so a crash still leaves the started row behind.
public final class JobRunRecorder {
    /// How a job ended.
    public enum Outcome: String, Sendable {
        /// Everything done (exit 0).
        case ok
        /// Stopped early with progress saved (exit 75).
        case partial
        /// Configuration problem (exit 78).
        case config
        /// Failed (exit 1).
        case failed
        /// Not run: another process held the job's lock.
        case skipped

        /// The outcome a job that ended with exit code `code` records (``ExitStatus``).
        public init(exitCode code: Int32) {
            switch code {
            case ExitStatus.ok: self = .ok
            case ExitStatus.temporary: self = .partial
            case ExitStatus.configuration: self = .config
            default: self = .failed
            }
        }
    }

    /// The `job_run.id`.
    public let id: Int64
    private let connection: PostgresConnection

    /// Inserts the started row.
    public init(job: String, app: String?, connection: PostgresConnection) throws {
        self.connection = connection
        let host = ProcessInfo.processInfo.hostName
        let row = try connection.query(
            "INSERT INTO job_run (job, app_id, host, pid) VALUES ($1, $2, $3, $4) RETURNING id",
            [job, app, host, Int(getpid())])[0]
        id = try row.decode("id")
    }

    /// Writes the outcome.
    /// - Parameters:
    ///   - counts: what the job did (`pages`, `rows`, `inserted`, ...).
    ///   - calls: store calls made per API name.
    ///   - error: the one-line error, if any (never a secret: errors in this project never hold one).
    public func finish(_ outcome: Outcome, counts: [String: Int], calls: [String: Int], error: String? = nil) throws {
        try connection.execute(
            """
            UPDATE job_run SET finished_at = now(), outcome = $2, counts = $3::jsonb, calls = $4::jsonb, error = $5
            WHERE id = $1
            """,
            [id, outcome.rawValue, PostgresJSON(text: Self.json(counts)), PostgresJSON(text: Self.json(calls)), error])
    }

    static func json(_ values: [String: Int]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
