import Foundation
import Logging
import Postgres
import Reconciler
import StoreSimulator
import Synchronization
import TestSupport

/// The recheck job against the simulator, plus the app backend's part: inserting subscriptions as they start.
struct RecheckHarness {
    let jobs: JobHarness
    var stores: SimulatedStores { jobs.stores }
    var simulator: StoreSimulator { jobs.stores.simulator }

    init(_ simulator: StoreSimulator, prefix: String) throws {
        jobs = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: prefix))
    }

    /// A recheck harness on the stores of an existing job harness.
    init(harness: JobHarness) {
        jobs = harness
    }

    /// One recheck of every configured app, through the JobRunner as the CLI runs it.
    func recheck(
        dryRun: Bool = false, logger: Logger? = nil, output: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> [String: JobRunner.Result] {
        var results: [String: JobRunner.Result] = [:]
        let configuration = stores.configuration
        for app in configuration.apps {
            results[app.id] = try await jobs.runner(dryRun: dryRun, logger: logger).run(
                job: ExpiryRecheck.job, app: app, waitForLock: false
            ) { environment in
                try await Self.body(app: app, configuration: configuration, output: output)(environment)
            }
        }
        return results
    }

    /// The job body for one app (what the command runs inside the JobRunner).
    static func body(
        app: AppConfig, configuration: Configuration, output: @escaping @Sendable (String) -> Void = { _ in }
    ) -> (JobEnvironment) async throws -> Void {
        { environment in
            let source = try ExpiryRecheck.source(for: app, configuration: configuration, environment: environment)
            try await ExpiryRecheck(
                app: app, configuration: configuration, options: ExpiryRecheck.Options(configuration.recheck),
                source: source, output: output
            ).run(in: environment)
        }
    }

    /// Inserts the subscriptions that exist in the store but not yet in the database, as the app backend does at
    /// purchase time: store id, product and expiry. Returns how many were new.
    @discardableResult
    func insertStarted(_ truth: [SubscriptionTruth]) throws -> Int {
        let connection = try jobs.connection()
        defer { connection.close() }
        let now = stores.now()
        return try connection.execute(
            """
            INSERT INTO subscription (app_id, store_id, product_id, expires_at, expiry_changed_at)
            SELECT a, s, p, CASE WHEN e IS NULL THEN NULL ELSE to_timestamp(e / 1000.0) END, $5
            FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS t(a, s, p, e)
            ON CONFLICT (app_id, store_id) DO NOTHING
            """,
            [
                PostgresTextArray(truth.map(\.app)), PostgresTextArray(truth.map(\.storeId)),
                PostgresTextArray(truth.map(\.productId)),
                PostgresNullableTextArray(truth.map { $0.expiresMillis.map(String.init) }), now,
            ])
    }

    /// A stored subscription as the comparisons see it.
    struct Row: Equatable {
        var id: Int64
        var app: String
        var state: String
        var storeState: String?
        var entitled: Bool
        var expiresMillis: Int64?
        var environment: String?
        var checkedMillis: Int64?
        var replacedBy: String?
        var chainRoot: String?
        var linked: String?
    }

    func rows() throws -> [String: Row] {
        let connection = try jobs.connection()
        defer { connection.close() }
        var rows: [String: Row] = [:]
        for row in try connection.query(
            """
            SELECT id, app_id, store_id, state, store_state, entitled,
                   (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms, environment,
                   (extract(epoch FROM last_checked_at) * 1000)::bigint AS checked_ms, replaced_by_store_id,
                   chain_root_store_id, linked_store_id
            FROM subscription
            """)
        {
            rows[try row.decode("store_id")] = Row(
                id: try row.decode("id"), app: try row.decode("app_id"), state: try row.decode("state"),
                storeState: try row.decodeIfPresent("store_state"), entitled: try row.decode("entitled"),
                expiresMillis: try row.decodeIfPresent("expires_ms"),
                environment: try row.decodeIfPresent("environment"),
                checkedMillis: try row.decodeIfPresent("checked_ms"),
                replacedBy: try row.decodeIfPresent("replaced_by_store_id"),
                chainRoot: try row.decodeIfPresent("chain_root_store_id"),
                linked: try row.decodeIfPresent("linked_store_id"))
        }
        return rows
    }

    /// A recorded transition.
    struct Transition: Equatable {
        var subscriptionId: Int64
        var oldState: String?
        var newState: String
        var kind: String
        var observedMillis: Int64
    }

    func transitions(after skipped: Int = 0) throws -> [Transition] {
        let connection = try jobs.connection()
        defer { connection.close() }
        return try connection.query(
            """
            SELECT subscription_id, old_state, new_state, classification,
                   (extract(epoch FROM observed_at) * 1000)::bigint AS observed_ms
            FROM subscription_transition ORDER BY id OFFSET $1
            """, [skipped]
        ).map { row in
            Transition(
                subscriptionId: try row.decode("subscription_id"), oldState: try row.decodeIfPresent("old_state"),
                newState: try row.decode("new_state"), kind: try row.decode("classification"),
                observedMillis: try row.decode("observed_ms"))
        }
    }

    /// Status calls the simulator answered since its statistics were last reset, per app.
    func statusCalls() -> [String: Int] {
        var calls: [String: Int] = [:]
        for entry in simulator.statistics()
        where entry.endpoint == .appleSubscriptionStatuses || entry.endpoint == .googleSubscriptionsV2 {
            calls[entry.app, default: 0] += entry.granted
        }
        return calls
    }

    /// The state storerecon should hold for a subscription's truth.
    static func expectedState(_ truth: SubscriptionTruth) -> String {
        if let status = truth.appleStatus {
            return [1: "active", 2: "expired", 3: "billing_retry", 4: "grace", 5: "revoked"][status] ?? "?"
        }
        switch truth.googleState?.replacingOccurrences(of: "SUBSCRIPTION_STATE_", with: "") {
        case "ACTIVE": return "active"
        case "CANCELED": return "canceled"
        case "IN_GRACE_PERIOD": return "grace"
        case "ON_HOLD": return "on_hold"
        case "PAUSED": return "paused"
        case "EXPIRED": return truth.replacedByToken != nil ? "replaced" : "expired"
        case "PENDING": return "pending"
        case "PENDING_PURCHASE_CANCELED": return "expired"
        default: return "?"
        }
    }
}

/// Collects printed lines from concurrent tasks.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger whose messages (info and above) are appended here.
    var logger: Logger {
        Logger(label: "test") { _ in LinesLogHandler(lines: self) }
    }
}

/// The log handler of ``Lines/logger``.
struct LinesLogHandler: LogHandler {
    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level): \(event.message)")
    }
}
