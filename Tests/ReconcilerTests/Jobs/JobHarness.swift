import Foundation
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport

/// Runs jobs in-process against a simulator the way the CLI does (JobRunner: lock, job_run, counting gate).
struct JobHarness: Sendable {
    let stores: SimulatedStores
    let gate: any QuotaGate

    /// A gate over the test database with `policy` (unlimited by default: volume tests lift the limits on both
    /// sides; quota tests pass the limits they check).
    init(stores: SimulatedStores, policy: QuotaPolicy = QuotaPolicy(defaultLimits: QuotaLimits())) {
        self.stores = stores
        gate = PostgresQuotaGate(conninfo: stores.conninfo, policy: policy, clock: ContinuousClock())
    }

    func runner(shutdown: ShutdownSignal = ShutdownSignal(), dryRun: Bool = false, logger given: Logger? = nil)
        -> JobRunner
    {
        var logger = given ?? Logger(label: "test")
        // STORERECON_TEST_LOG=debug shows a job's timeline (every store call and page) when a test needs reading.
        if given == nil {
            logger.logLevel = ProcessInfo.processInfo.environment["STORERECON_TEST_LOG"] == "debug" ? .debug : .warning
        }
        return JobRunner(
            configuration: stores.configuration, gate: gate, shutdown: shutdown, dryRun: dryRun, quiet: true,
            logger: logger, now: stores.now)
    }

    /// One Google voided sync (or backfill) of the scenario's Google app.
    func googleVoided(
        _ mode: GoogleVoidedSync.Mode = .incremental, dryRun: Bool = false, shutdown: ShutdownSignal = ShutdownSignal()
    ) async throws -> JobRunner.Result {
        let app = stores.app(.google)
        let configuration = voidedConfiguration
        let job = mode == .incremental ? GoogleVoidedSync.job : GoogleVoidedSync.backfillJob
        return try await runner(shutdown: shutdown, dryRun: dryRun).run(job: job, app: app, waitForLock: false) {
            environment in
            let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
            _ = try await GoogleVoidedSync(app: app, configuration: configuration, client: client)
                .run(mode, in: environment)
        }
    }

    /// The configuration the Google voided jobs run with: one token chain unless the test's YAML sets
    /// `sync.googleSlices`. How many slices a window gets follows the call time measured at its start; on a loaded
    /// machine that can pass the 0.1 s that makes a second slice, and these tests count calls per page.
    var voidedConfiguration: Configuration {
        var configuration = stores.configuration
        if configuration.sync.googleSlices == SyncConfig().googleSlices { configuration.sync.googleSlices = 1 }
        return configuration
    }

    func connection() throws -> PostgresConnection {
        try PostgresConnection(conninfo: stores.conninfo)
    }

    /// Options every job test starts the simulator with: the simulator's scenario clock stays fixed (tests move it),
    /// while bearer and OAuth checks use the wall clock our clients sign with.
    static func options(_ spec: ScenarioSpec) -> SimulatorOptions {
        var options = SimulatorOptions(scenario: spec)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        return options
    }

    /// Limits lifted on the simulator side.
    static func unlimited(_ options: inout SimulatorOptions) {
        options.quotas.voidedPerWindow = 1_000_000
        options.quotas.voidedPerMinute = 1_000_000
        options.quotas.voidedPerDay = 1_000_000
        options.quotas.subscriptionsPerMinute = 1_000_000
        options.quotas.developerApiPerDay = 1_000_000
        options.quotas.appleRefundHistoryPerSecond = 1_000_000
        options.quotas.appleOtherPerSecond = 1_000_000
    }
}

/// One stored Google refund, as the comparison with ground truth sees it.
struct StoredVoid: Hashable {
    var orderId: String
    var partKey: String
    var purchaseToken: String
    var voidedMillis: Int64
    var reason: Int
    var source: Int
    var quantity: Int
}

extension JobHarness {
    func storedVoids() throws -> Set<StoredVoid> {
        let rows = try connection().query(
            """
            SELECT order_id, part_key, original_id, (extract(epoch FROM refunded_at) * 1000)::bigint AS voided_ms,
                   reason_code, source_code, quantity
            FROM refund WHERE platform = 'google' AND revoked
            """)
        return Set(
            try rows.map { row in
                StoredVoid(
                    orderId: try row.decode("order_id"), partKey: try row.decode("part_key"),
                    purchaseToken: try row.decode("original_id"), voidedMillis: try row.decode("voided_ms"),
                    reason: try row.decode("reason_code"), source: try row.decode("source_code"),
                    quantity: try row.decode("quantity"))
            })
    }

    /// Units a void refunded, from the scenario's facts: a part its own; a whole-order void what the parts before it
    /// left of the units bought (the quantity storerecon takes from the order).
    static func units(_ void: GroundTruth.GoogleVoid, parts: [String: [GroundTruth.GoogleVoid]]) -> Int {
        if let part = void.voidedQuantity { return part }
        let before = (parts[void.orderId] ?? []).filter { $0.voidedTimeMillis <= void.voidedTimeMillis }
        return void.orderQuantity - before.reduce(0) { $0 + ($1.voidedQuantity ?? 0) }
    }

    /// The quantity-based parts of the truth, by order id.
    static func parts(_ truth: GroundTruth) -> [String: [GroundTruth.GoogleVoid]] {
        Dictionary(grouping: truth.googleVoids.filter { $0.voidedQuantity != nil }, by: \.orderId)
    }

    /// The voids the store holds recorded in `[from, to]`, keyed as storerecon keys them.
    func truthVoids(recordedFrom from: Date, to: Date) -> Set<StoredVoid> {
        let truth = stores.simulator.groundTruth()
        let parts = JobHarness.parts(truth)
        let low = Int64(from.timeIntervalSince1970 * 1000)
        let high = Int64(to.timeIntervalSince1970 * 1000)
        return Set(
            truth.googleVoids.filter { $0.recorded && $0.recordedTimeMillis >= low && $0.recordedTimeMillis <= high }
                .map { void in
                    StoredVoid(
                        orderId: void.orderId,
                        partKey: void.voidedQuantity.map { "\(void.voidedTimeMillis):\($0)" } ?? "",
                        purchaseToken: void.purchaseToken, voidedMillis: void.voidedTimeMillis,
                        reason: void.voidedReason, source: void.voidedSource,
                        quantity: JobHarness.units(void, parts: parts))
                })
    }
}
