import Postgres

/// One writer per job and app: a session advisory lock named `storerecon.job.<job>.<app>`.
public enum JobLock {
    /// The lock key of a job for an app.
    public static func key(job: String, app: String) -> AdvisoryLockKey {
        AdvisoryLockKey("storerecon.job.\(job).\(app)")
    }

    /// Runs `body` holding the job's lock.
    /// - Parameter wait: wait for the lock (`true`) or return `nil` at once when another process holds it.
    /// - Returns: `body`'s result, or `nil` when the lock was held elsewhere and `wait` is false.
    public static func withLock<T>(
        job: String, app: String, wait: Bool, on connection: PostgresConnection, _ body: () async throws -> T
    ) async throws -> T? {
        let key = key(job: job, app: app)
        if wait {
            try connection.advisoryLock(key)
        } else if try !connection.tryAdvisoryLock(key) {
            return nil
        }
        defer { _ = try? connection.advisoryUnlock(key) }
        return try await body()
    }
}
