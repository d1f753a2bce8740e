import Foundation
import Logging
import Postgres
import RateLimiting
import Synchronization

/// What every job run gets: the database, the shared quota gate (already counting calls), its run record, counters,
/// the stop signal, and whether to write at all.
public struct JobEnvironment {
    /// The job's own connection (jobs never share one).
    public let connection: PostgresConnection
    /// Every store call passes this gate.
    public let gate: any QuotaGate
    /// Counts of this run.
    public let counters: JobCounters
    /// `job_run.id`, when recorded.
    public let runId: Int64?
    /// SIGTERM / SIGINT: finish the page in hand, save, stop with exit 75.
    public let shutdown: ShutdownSignal
    /// `--dry-run`: call the stores, write nothing, say what would change.
    public let dryRun: Bool
    /// Logger with app, job and run id metadata.
    public let logger: Logger
    /// Progress display for terminals (nil under cron).
    public let progress: ProgressDisplay?
    /// The current time (injectable so tests can follow the store simulator's clock).
    public let now: @Sendable () -> Date
    /// Where ``answersSent(_:)`` reports to: the side-by-side run that started the job, if any.
    let warmUp: WarmUpSignal?

    /// Creates an environment.
    public init(
        connection: PostgresConnection, gate: any QuotaGate, counters: JobCounters, runId: Int64?,
        shutdown: ShutdownSignal, dryRun: Bool, logger: Logger, progress: ProgressDisplay?,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            connection: connection, gate: gate, counters: counters, runId: runId, shutdown: shutdown, dryRun: dryRun,
            logger: logger, progress: progress, now: now, warmUp: nil)
    }

    init(
        connection: PostgresConnection, gate: any QuotaGate, counters: JobCounters, runId: Int64?,
        shutdown: ShutdownSignal, dryRun: Bool, logger: Logger, progress: ProgressDisplay?,
        now: @escaping @Sendable () -> Date, warmUp: WarmUpSignal?
    ) {
        self.connection = connection
        self.gate = gate
        self.counters = counters
        self.runId = runId
        self.shutdown = shutdown
        self.dryRun = dryRun
        self.logger = logger
        self.progress = progress
        self.now = now
        self.warmUp = warmUp
    }

    /// Tells the side-by-side run that started this job (if any) that `count` more of its answers reached the store:
    /// once the first ones have, the job's urgent start is over and other apps may take the cores
    /// (``SideBySideSchedule``). Call it after each group of calls.
    public func answersSent(_ count: Int) {
        warmUp?.answersSent(count)
    }

    /// Everything but the connection, for workers that each open a connection of their own.
    public var shared: Shared {
        Shared(
            gate: gate, counters: counters, runId: runId, shutdown: shutdown, dryRun: dryRun, logger: logger,
            progress: progress, now: now, warmUp: warmUp)
    }

    /// What a job's concurrent workers share: the environment without its connection (a connection is one session
    /// and never crosses tasks).
    public struct Shared: Sendable {
        let gate: any QuotaGate
        let counters: JobCounters
        let runId: Int64?
        let shutdown: ShutdownSignal
        let dryRun: Bool
        let logger: Logger
        let progress: ProgressDisplay?
        let now: @Sendable () -> Date
        let warmUp: WarmUpSignal?

        /// The environment of a worker on `connection`.
        public func environment(on connection: PostgresConnection) -> JobEnvironment {
            JobEnvironment(
                connection: connection, gate: gate, counters: counters, runId: runId, shutdown: shutdown,
                dryRun: dryRun, logger: logger, progress: progress, now: now, warmUp: warmUp)
        }
    }

    /// Throws the "stopped early" error when a stop was requested; call between pages.
    public func checkShutdown() throws {
        if shutdown.isRequested { throw StoppableQuotaGate.stopped }
    }
}

/// A job's report of its first answers sent, to the side-by-side run that started it (``SideBySideSchedule``): it
/// calls `onWarm` once, when the answers reported through ``JobEnvironment/answersSent(_:)`` first reach `threshold`.
final class WarmUpSignal: Sendable {
    private let threshold: Int
    private let sent = Atomic<Int>(0)
    private let onWarm: @Sendable () -> Void

    init(threshold: Int, onWarm: @escaping @Sendable () -> Void) {
        self.threshold = max(1, threshold)
        self.onWarm = onWarm
    }

    func answersSent(_ count: Int) {
        guard count > 0 else { return }
        let total = sent.add(count, ordering: .relaxed).newValue
        if total >= threshold, total - count < threshold { onWarm() }
    }
}

/// A job's progress line on a terminal: one line per running app on the process's ``ProgressBoard`` (rewritten in
/// place on stderr), silent when stderr is not a terminal or `--quiet` is given.
public final class ProgressDisplay: Sendable {
    private let enabled: Bool
    private let key: String
    private let board: ProgressBoard

    /// Shows progress only when stderr is a terminal and `quiet` is off.
    /// - Parameter key: the app whose line this is (its id starts the line).
    public init(quiet: Bool, key: String = "", board: ProgressBoard = .shared) {
        enabled = !quiet && isatty(STDERR_FILENO) == 1
        self.key = key
        self.board = board
    }

    /// Whether the line is shown (stderr is a terminal and `--quiet` is off): work done only for it can be skipped.
    public var isEnabled: Bool { enabled }

    /// Replaces the progress line.
    public func update(_ line: String) {
        guard enabled else { return }
        board.update(key, key.isEmpty ? line : "\(key): \(line)")
    }

    /// Ends the progress line.
    public func finish() {
        guard enabled else { return }
        board.remove(key)
    }
}
