import AppStoreServerAPI
import Foundation
import Logging
import Postgres
import RateLimiting
import Synchronization

/// `storerecon recheck`: asks the stores about the subscriptions near expiry (and those in watched states or flagged
/// by the refund jobs), stores what they say, and records every status change in `subscription_transition`.
///
/// The due set is listed once (``RecheckPlanner``), then `concurrency` workers, each on its own database
/// connection, claim it a batch at a time with a lease under `FOR UPDATE SKIP LOCKED`: concurrent processes split
/// the set and no subscription is asked about twice. Each answer commits in its own transaction. Unusable answers
/// are reported and counted as failures (the run ends with exit 1) while the others go on; a quota stop or an
/// outage ends the run with exit 75 and whatever was committed stays.
public struct ExpiryRecheck: Sendable {
    /// The job name (`job_run.job`, the advisory lock).
    public static let job = "recheck"

    /// Tuning.
    public struct Options: Sendable, Equatable {
        /// Ask about expiries up to this far ahead.
        public var lead: TimeInterval
        /// Ask about expiries up to this far back.
        public var lag: TimeInterval
        /// Whether a run reaches back past `lag` to the last complete run (off when `--lag` is given).
        public var catchUp = true
        /// Status calls in flight at once.
        public var concurrency: Int
        /// Subscriptions claimed at a time by one worker.
        public var batchSize = 16
        /// How long a claim holds.
        public var lease: TimeInterval = 15 * 60
        /// How often at most a watched subscription is asked about.
        public var watchInterval: TimeInterval = 12 * 3600

        /// Options from `recheck:` with optional command-line overrides.
        public init(_ config: RecheckConfig, lead: ConfigDuration? = nil, lag: ConfigDuration? = nil) {
            self.lead = TimeInterval((lead ?? config.lead).seconds)
            self.lag = TimeInterval((lag ?? config.lag).seconds)
            catchUp = lag == nil
            concurrency = max(1, config.concurrency)
        }
    }

    /// What a run did.
    public struct Summary: Sendable, Equatable {
        /// Subscriptions listed as due.
        public var selected = 0
        /// Claimed and asked about.
        public var asked = 0
        /// Transitions recorded (or that a dry run would record), by classification.
        public var transitions: [TransitionKind: Int] = [:]
        /// Subscriptions the stores no longer know.
        public var missing = 0
        /// Answers with a state value this version does not know.
        public var unknownStates = 0
        /// Answers that could not be used.
        public var badAnswers = 0
        /// Due subscriptions locked when their batch was claimed (leased by another process, or being written by
        /// another worker of this run): tried once more at the end of the run.
        public var skipped: [RecheckPlanner.Due] = []
    }

    let app: AppConfig
    let conninfo: String
    let options: Options
    let source: any SubscriptionStatusSource
    let classifier: TransitionClassifier
    let output: @Sendable (String) -> Void

    /// Creates the job for one app.
    /// - Parameters:
    ///   - source: the store calls (``AppleStatusSource`` or ``GoogleStatusSource``).
    ///   - output: where `--dry-run` prints the transitions it would record (stdout by default).
    public init(
        app: AppConfig, configuration: Configuration, options: Options, source: any SubscriptionStatusSource,
        output: @escaping @Sendable (String) -> Void = { print($0) }
    ) {
        self.app = app
        conninfo = configuration.database.url
        self.options = options
        self.source = source
        classifier = TransitionClassifier(tiers: configuration.products.compactMapValues(\.tier))
        self.output = output
    }

    /// The source for a configured app, its calls on the job's gate.
    public static func source(for app: AppConfig, configuration: Configuration, environment: JobEnvironment) throws
        -> any SubscriptionStatusSource
    {
        switch app.platform {
        case .google:
            let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
            return GoogleStatusSource(client: client, packageName: app.storeAppId)
        case .apple:
            return AppleStatusSource(
                environments: try StoreClients.apple(
                    for: app, sandboxFallback: configuration.sync.appleSandboxFallback, gate: environment.gate,
                    logger: environment.logger))
        }
    }

    /// Runs the job.
    /// - Throws: what stopped the workers (``ExitStatus`` maps it: 75 for quota, an outage or a signal, 78 for
    ///   credentials the store refuses), or `ReconcilerError` `.failed` (exit 1) when some answers could not be
    ///   used; what was committed stays either way.
    @discardableResult
    public func run(in environment: JobEnvironment) async throws -> Summary {
        try adoptRequested(in: environment)
        let now = environment.now()
        var checkpoint = try SyncCheckpoint.load(job: Self.job, app: app.id, on: environment.connection)
        let lag = Self.reach(options, now: now, lastComplete: checkpoint.highWater, logger: environment.logger)
        let planner = RecheckPlanner(lead: options.lead, lag: lag, watchInterval: options.watchInterval)
        let due = try planner.due(app: app.id, now: now, on: environment.connection)
        let batches = stride(from: 0, to: due.count, by: options.batchSize).map {
            Array(due[$0..<min(due.count, $0 + options.batchSize)])
        }
        let context = RecheckWorker.Context(
            app: app, conninfo: conninfo, options: options, source: source,
            store: RecheckStore(app: app.id, classifier: classifier, runId: environment.runId),
            counters: environment.counters, shutdown: environment.shutdown, dryRun: environment.dryRun,
            logger: environment.logger, now: environment.now, output: output,
            claimer: "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UUID().uuidString.prefix(8))")
        environment.counters.add("selected", due.count)
        environment.logger.info(
            "\(due.count) subscriptions due (expiry within -\(Int(lag / 3600))h/+\(Int(options.lead / 3600))h, watched or flagged)"
        )
        let tally = Tally(selected: due.count)
        let workers = min(options.concurrency, max(1, batches.count))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    let worker = try RecheckWorker(context)
                    defer { worker.close() }
                    while true {
                        try Task.checkCancellation()
                        guard let index = tally.nextBatch(of: batches.count) else { return }
                        tally.add(try await worker.process(batches[index]))
                    }
                }
            }
            try await group.waitForAll()
        }
        let result = try await retrySkipped(tally.summary, context: context, counters: environment.counters)
        let changes = result.transitions.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        environment.logger.info(
            "\(environment.dryRun ? "dry run: " : "")\(result.selected) due, \(result.asked) asked, transitions: \(changes.isEmpty ? "none" : changes); \(result.missing) missing, \(result.unknownStates) unknown states, \(result.badAnswers) bad answers"
        )
        if result.badAnswers > 0 {
            throw ReconcilerError(
                .failed,
                "\(result.badAnswers) of \(result.asked) status answers could not be used (see the log); their stored state is unchanged"
            )
        }
        if !environment.dryRun {
            checkpoint.highWater = now
            try checkpoint.save(on: environment.connection)
        }
        return result
    }
}

extension ExpiryRecheck {
    /// The longest a run reaches back past its configured lag to catch up on runs that did not happen.
    static let maxCatchUp: TimeInterval = 60 * 86_400

    /// How far back a run at `now` asks about expiries: the configured `lag`, or back to the start of the last
    /// complete run (the checkpoint's high water) when that is further, so the expiries of an outage's days are
    /// asked about once it is over; at most ``maxCatchUp`` (Google answers for 60 days after expiry).
    static func lag(_ configured: TimeInterval, now: Date, lastComplete: Date?) -> TimeInterval {
        guard let lastComplete else { return configured }
        return max(configured, min(now.timeIntervalSince(lastComplete), maxCatchUp))
    }

    /// A run's lag: the catch-up's unless `--lag` was given, with a warning when the outage is longer than it.
    static func reach(_ options: Options, now: Date, lastComplete: Date?, logger: Logger) -> TimeInterval {
        guard options.catchUp else { return options.lag }
        if let lastComplete, now.timeIntervalSince(lastComplete) > maxCatchUp {
            let days = Int(now.timeIntervalSince(lastComplete) / 86_400)
            logger.warning(
                "the last complete recheck started \(days) days ago: expiries more than \(Int(maxCatchUp / 86_400)) days back are not asked about"
            )
        }
        return lag(options.lag, now: now, lastComplete: lastComplete)
    }

    /// Asks once more about the due subscriptions that were locked when their batch was claimed. A worker recording a
    /// successor's answer marks the token it replaced in the same transaction, which holds that row's lock: a batch
    /// claimed at that moment passed it by (`SKIP LOCKED`), and whether the run asked about it hung on the workers'
    /// timing. Those still locked or leased now are another process's (counted `claimed_elsewhere`).
    func retrySkipped(
        _ summary: Summary, context: RecheckWorker.Context, counters: JobCounters
    ) async throws -> Summary {
        var result = summary
        result.skipped = []
        guard !summary.skipped.isEmpty else { return result }
        let worker = try RecheckWorker(context)
        defer { worker.close() }
        var again = try await worker.process(summary.skipped)
        counters.add("claimed_elsewhere", again.skipped.count)
        again.skipped = []
        result.merge(again)
        return result
    }

    /// Adds the tokens a store notification queued that storerecon does not know yet, so this run asks about them (a
    /// dry run adds nothing, and so does not ask about them).
    func adoptRequested(in environment: JobEnvironment) throws {
        guard !environment.dryRun else { return }
        let (added, waiting) = try RecheckRequests.adoptUnknown(app: app.id, on: environment.connection)
        environment.counters.add("adopted", added)
        if added > 0 {
            environment.logger.info(
                "\(added) subscriptions a store notification named were not known: added, asked now")
        }
        if waiting > 0 {
            environment.logger.warning(
                "\(waiting) queued subscriptions are not known and their notification named no product: not asked")
        }
    }
}

/// The workers' shared position in the batch list and their summed results.
private final class Tally: Sendable {
    private let state: Mutex<(next: Int, summary: ExpiryRecheck.Summary)>

    init(selected: Int) {
        var summary = ExpiryRecheck.Summary()
        summary.selected = selected
        state = Mutex((0, summary))
    }

    /// The next batch to take, or nil when all are taken.
    func nextBatch(of count: Int) -> Int? {
        state.withLock { state in
            guard state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    func add(_ done: ExpiryRecheck.Summary) { state.withLock { $0.summary.merge(done) } }

    var summary: ExpiryRecheck.Summary { state.withLock { $0.summary } }
}

extension ExpiryRecheck.Summary {
    mutating func merge(_ other: Self) {
        asked += other.asked
        missing += other.missing
        unknownStates += other.unknownStates
        badAnswers += other.badAnswers
        skipped += other.skipped
        for (kind, count) in other.transitions { transitions[kind, default: 0] += count }
    }
}
