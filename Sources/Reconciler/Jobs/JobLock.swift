import Postgres

/// One writer per job and app: a session advisory lock named `storerecon.job.<job>.<app>`.
public enum JobLock {
    /// How often a job waiting for its lock asks again.
    static let retryInterval: Duration = .milliseconds(500)

    /// The lock key of a job for an app.
    public static func key(job: String, app: String) -> AdvisoryLockKey {
        AdvisoryLockKey("storerecon.job.\(job).\(app)")
    }

    /// Runs `body` holding the job's lock.
    /// - Parameter wait: wait for the lock (`true`) or return `nil` at once when another process holds it. The wait
    ///   asks again every half second rather than blocking in the database, so it holds no thread while it waits
    ///   (the other apps of a nightly run go on) and ends when the task is cancelled (the app's deadline, a signal).
    /// - Returns: `body`'s result, or `nil` when the lock was held elsewhere and `wait` is false.
    ///   A stop requested meanwhile (SIGTERM) ends the wait too (``ShutdownSignal``).
    /// - Throws: `CancellationError` when cancelled while waiting; ``ReconcilerError`` (`.temporary`) when a stop was
    ///   requested while waiting; what `body` throws.
    public static func withLock<T>(
        job: String, app: String, wait: Bool, shutdown: ShutdownSignal? = nil, on connection: PostgresConnection,
        _ body: () async throws -> T
    ) async throws -> T? {
        let key = key(job: job, app: app)
        while try !connection.tryAdvisoryLock(key) {
            guard wait else { return nil }
            if shutdown?.isRequested == true {
                throw ReconcilerError(.temporary, "stopped by signal while waiting for the \(job) lock of \(app)")
            }
            try await Task.sleep(for: retryInterval)
        }
        defer { _ = try? connection.advisoryUnlock(key) }
        return try await body()
    }
}
