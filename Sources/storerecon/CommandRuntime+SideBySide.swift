import ArgumentParser
import Foundation
import RateLimiting
import Reconciler

extension CommandRuntime {
    /// ``runJobs(_:apps:_:)`` with the apps side by side, within `nightly.concurrency` database connections (by
    /// default half those the server has free; unlike `run nightly`, not bounded per core, since these apps spend
    /// their time waiting on their own store quotas): each app holds two, its job's and its own quota gate's. The
    /// `paced` apps (those waiting on a per-second quota) go first (``JobRunner/runSideBySide``).
    func runJobsSideBySide(
        _ job: String, apps: [AppConfig], paced: (AppConfig) -> Bool = { _ in true },
        _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async throws {
        guard !apps.isEmpty else {
            logger.warning("no app of this platform is configured; nothing to do")
            return
        }
        var connections = 2
        if apps.count > 1 {
            let connection = try connect()
            defer { connection.close() }
            connections =
                try configuration.nightly.concurrency
                ?? max(2, NightlyFleet.freeConnections(on: connection) / 2)
        }
        let (record, configuration, logger) = (self.record, self.configuration, self.logger)
        let results = await jobRunner().runSideBySide(
            job: job, apps: apps, concurrency: max(1, connections / 2), paced: paced,
            ownGates: {
                PostgresQuotaGate(
                    conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock(),
                    logger: logger)
            }, record: { record.add([$0]) }, body)
        let worst = ExitStatus.worst(results.map(\.exitCode))
        if worst != 0 { throw ExitCode(worst) }
    }
}
