import AppStoreServerAPI
import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import StoreHTTP

/// Runs one job for one app the way every command does: under the job's advisory lock, recorded in `job_run` with
/// its outcome, counts and calls per API, errors reduced to one line and an exit code.
public struct JobRunner: Sendable {
    /// The outcome of one job for one app.
    public struct Result: Sendable {
        /// The job name.
        public var job: String
        /// The app id.
        public var app: String
        /// How it ended.
        public var outcome: JobRunRecorder.Outcome
        /// The process exit code this outcome asks for (0, 75, 78, 1).
        public var exitCode: Int32
        /// The one-line error, if any.
        public var error: String?
        /// Counts (rows, pages, ...).
        public var counts: [String: Int]
        /// Store calls per API.
        public var calls: [String: Int]
        /// Seconds the job took.
        public var seconds: Double

        /// Creates a result.
        public init(
            job: String, app: String, outcome: JobRunRecorder.Outcome, exitCode: Int32, error: String?,
            counts: [String: Int], calls: [String: Int], seconds: Double
        ) {
            self.job = job
            self.app = app
            self.outcome = outcome
            self.exitCode = exitCode
            self.error = error
            self.counts = counts
            self.calls = calls
            self.seconds = seconds
        }
    }

    /// The configuration.
    public let configuration: Configuration
    /// The shared quota gate.
    public let gate: any QuotaGate
    /// The stop signal.
    public let shutdown: ShutdownSignal
    /// Write nothing.
    public let dryRun: Bool
    /// Show progress on a terminal.
    public let quiet: Bool
    /// Base logger.
    public let logger: Logger
    /// The current time.
    public let now: @Sendable () -> Date
    /// Where jobs take their connection and give it back (``runSideBySide(job:apps:concurrency:paced:gates:record:_:)``);
    /// `nil`: each job opens its own and closes it.
    var connectionPool: JobConnectionPool?
    /// Where the job's ``JobEnvironment/answersSent(_:)`` reports (a side-by-side run's schedule); `nil`: nowhere.
    var warmUp: WarmUpSignal?

    /// Creates a runner.
    public init(
        configuration: Configuration, gate: any QuotaGate, shutdown: ShutdownSignal, dryRun: Bool, quiet: Bool,
        logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.gate = gate
        self.shutdown = shutdown
        self.dryRun = dryRun
        self.quiet = quiet
        self.logger = logger
        self.now = now
    }

    /// Runs `body` for `app` under the job's lock, on ``DatabaseThreads``: the job's statements, and those of the
    /// connections its child tasks open, never block a thread of Swift's shared pool.
    /// - Parameters:
    ///   - waitForLock: wait when another process holds the lock; otherwise skip with a clear line.
    ///   - deadline: the app's nightly deadline; a job that fails once it has passed was stopped by it (exit 75).
    public func run(
        job: String, app: AppConfig, waitForLock: Bool, deadline: AppDeadline? = nil,
        _ body: (JobEnvironment) async throws -> Void
    ) async throws -> Result {
        try await DatabaseThreads.run {
            try await runHere(job: job, app: app, waitForLock: waitForLock, deadline: deadline, body)
        }
    }

    private func runHere(
        job: String, app: AppConfig, waitForLock: Bool, deadline: AppDeadline?,
        _ body: (JobEnvironment) async throws -> Void
    ) async throws -> Result {
        let started = ContinuousClock.now
        let connection = try connectionPool?.take() ?? PostgresConnection(conninfo: configuration.database.url)
        defer {
            if let connectionPool { connectionPool.giveBack(connection) } else { connection.close() }
        }
        var logger = self.logger
        logger[metadataKey: "app"] = "\(app.id)"
        logger[metadataKey: "job"] = "\(job)"
        let counters = JobCounters()
        func result(_ outcome: JobRunRecorder.Outcome, _ code: Int32, _ error: String?) -> Result {
            Result(
                job: job, app: app.id, outcome: outcome, exitCode: code, error: error, counts: counters.snapshot,
                calls: counters.callSnapshot, seconds: (ContinuousClock.now - started).seconds)
        }
        let ran: Result?
        do {
            ran = try await JobLock.withLock(
                job: job, app: app.id, wait: waitForLock, shutdown: shutdown, on: connection
            ) { () -> Result in
                let recorder = dryRun ? nil : try JobRunRecorder(job: job, app: app.id, connection: connection)
                if let recorder { logger[metadataKey: "run"] = "\(recorder.id)" }
                let environment = JobEnvironment(
                    connection: connection,
                    gate: CountingQuotaGate(
                        base: StoppableQuotaGate(base: gate, shutdown: shutdown), counters: counters),
                    counters: counters,
                    runId: recorder?.id, shutdown: shutdown, dryRun: dryRun, logger: logger,
                    progress: ProgressDisplay(quiet: quiet, key: app.id), now: now, warmUp: warmUp)
                do {
                    try await body(environment)
                } catch {
                    environment.progress?.finish()
                    // Cut by the app's deadline: whatever the interrupted call threw (a cancellation, a transport error).
                    let (code, line) = deadline?.passed.map { (ExitStatus.temporary, $0) } ?? Self.classify(error)
                    let outcome = JobRunRecorder.Outcome(exitCode: code)
                    if code == ExitStatus.temporary {
                        logger.warning("stopped early, progress saved: \(line)")
                    } else {
                        logger.error("\(line)")
                    }
                    // The run record is written on a fresh statement; if the database itself is gone it stays "started".
                    if connection.isOpen {
                        try? recorder?.finish(
                            outcome, counts: counters.snapshot, calls: counters.callSnapshot, error: line)
                    }
                    return result(outcome, code, line)
                }
                do {
                    try recorder?.finish(.ok, counts: counters.snapshot, calls: counters.callSnapshot)
                } catch {
                    // The job's work is stored; its run record says `started`, so `status` would call it unfinished.
                    let (code, line) = Self.classify(error)
                    logger.error("the job's work is stored, but its run record could not be written: \(line)")
                    return result(JobRunRecorder.Outcome(exitCode: code), code, line)
                }
                let done = result(.ok, 0, nil)
                // A warning when the store throttled calls, so that --quiet keeps this one line for them.
                let throttled = done.calls.filter { $0.key.hasSuffix(".throttled") }.values.reduce(0, +)
                logger.log(level: throttled > 0 ? .warning : .info, "\(Self.summary(done))")
                return done
            }
        } catch let stopped as ReconcilerError where stopped.code == .temporary && shutdown.isRequested {
            // Stopped while waiting for the lock: nothing ran.
            logger.warning("\(stopped.message)")
            return result(JobRunRecorder.Outcome(exitCode: ExitStatus.temporary), ExitStatus.temporary, stopped.message)
        }
        if let ran { return ran }
        logger.notice("skipped: another process holds the \(job) lock for \(app.id)")
        return result(.skipped, 0, nil)
    }

    /// The one line every job ends with: its counters and store calls, in name order
    /// (`done in 2.1 s: customers=4 inserted=3; calls apple.refundhistory=5`).
    static func summary(_ result: Result) -> String {
        let counts = result.counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let calls = result.calls.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "done in \(String(format: "%.1f", result.seconds)) s: "
            + (counts.isEmpty ? "nothing to do" : counts.joined(separator: " "))
            + (calls.isEmpty ? "; no store calls" : "; calls " + calls.joined(separator: " "))
    }

    /// Maps any error to an exit code and one line (``ExitStatus/classify(_:)``, the one map every command uses).
    public static func classify(_ error: any Error) -> (Int32, String) {
        ExitStatus.classify(error)
    }
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
