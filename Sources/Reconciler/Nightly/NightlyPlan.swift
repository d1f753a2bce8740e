import Foundation

/// The jobs of one app's night, in order: each app keeps this order whatever the other apps do.
///
/// - Google: the voided sync (pages, and the amounts of what it stored), the recheck (which learns each
///   subscription's current order), then the known orders re-read for refunds Google made without revoking them,
///   so that one night finds the refunds of the orders the recheck just learnt rather than the next night.
/// - Apple: the refund sync, then the recheck.
public enum NightlyPlan {
    /// One job of the plan.
    public struct Job: Sendable {
        /// The job name (`job_run.job`, the advisory lock, the metrics' `job` label).
        public var name: String
        /// Database connections the job holds at once (its own, and its workers').
        public var connections: Int
        /// Runs the job.
        public var body: @Sendable (AppConfig, Configuration, JobEnvironment) async throws -> Void

        /// Creates a job.
        public init(
            name: String, connections: Int,
            body: @escaping @Sendable (AppConfig, Configuration, JobEnvironment) async throws -> Void
        ) {
            self.name = name
            self.connections = connections
            self.body = body
        }
    }

    /// The job that re-reads known Google orders for refunds made without revocation.
    public static let googleKnownOrdersJob = "google_orders"

    /// The jobs of `app`, in order.
    public static func jobs(for app: AppConfig, configuration: Configuration) -> [Job] {
        switch app.platform {
        case .google:
            return [googleVoided(rereadingKnownOrders: false), recheck(configuration), googleKnownOrders]
                + payoutJobs(for: app)
        case .apple:
            return refundJobs(for: app, configuration: configuration) + [recheck(configuration)] + payoutJobs(for: app)
        }
    }

    /// The refund job of `app` alone (the Google one re-reads the known orders itself).
    public static func refundJobs(for app: AppConfig, configuration: Configuration) -> [Job] {
        switch app.platform {
        case .google:
            return [googleVoided(rereadingKnownOrders: true)]
        case .apple:
            return [
                Job(name: AppleRefundSync.job, connections: 1 + max(1, configuration.sync.appleConcurrency)) {
                    app, configuration, environment in
                    let access = try StoreClients.apple(
                        for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
                    try await AppleRefundSync(app: app, configuration: configuration, access: access)
                        .run(.incremental, in: environment)
                }
            ]
        }
    }

    static func googleVoided(rereadingKnownOrders: Bool) -> Job {
        Job(name: GoogleVoidedSync.job, connections: 1) { app, configuration, environment in
            let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
            var sync = GoogleVoidedSync(app: app, configuration: configuration, client: client)
            sync.rereadsKnownOrders = rereadingKnownOrders
            _ = try await sync.run(.incremental, in: environment)
        }
    }

    static func recheck(_ configuration: Configuration) -> Job {
        Job(name: ExpiryRecheck.job, connections: 1 + max(1, configuration.recheck.concurrency)) {
            app, configuration, environment in
            let source = try ExpiryRecheck.source(for: app, configuration: configuration, environment: environment)
            try await ExpiryRecheck(
                app: app, configuration: configuration, options: ExpiryRecheck.Options(configuration.recheck),
                source: source
            ).run(in: environment)
        }
    }

    static let googleKnownOrders = Job(name: googleKnownOrdersJob, connections: 1) {
        app, configuration, environment in
        guard !environment.dryRun else { return }
        let client = try StoreClients.play(for: app, gate: environment.gate, logger: environment.logger)
        let summary = try await GoogleOrderAmounts(app: app, client: client, prices: configuration.configuredPrices)
            .readKnownOrders(limit: GoogleVoidedSync.knownOrdersPerRun, purpose: .incremental, in: environment)
        if summary.stopped {
            environment.logger.warning(
                "Orders API calls stopped before every known order was read (quota, permission or outage); the rest waits for the next night"
            )
        }
    }
}
