import ArgumentParser
import Foundation
import Postgres
import RateLimiting
import Reconciler

extension CommandRuntime {
    /// ``runJobs(_:apps:_:)`` with the apps side by side, within `nightly.concurrency` database connections (by
    /// default half those the server has free; unlike `run nightly`, not bounded per core, since these apps spend
    /// their time waiting on their own store quotas): one per running app's job, handed on to the next app when
    /// one ends, and those of a few quota gates that the apps share, one per core (``sharedGateCount(apps:connections:)``). The
    /// `paced` apps (those waiting on a per-second quota) go first, the others once those have sent their first
    /// answers (``JobRunner/runSideBySide``).
    func runJobsSideBySide(
        _ job: String, apps: [AppConfig], paced: (AppConfig) -> Bool = { _ in true },
        _ body: @escaping @Sendable (AppConfig, JobEnvironment) async throws -> Void
    ) async throws {
        guard !apps.isEmpty else {
            logger.warning("no app of this platform is configured; nothing to do")
            return
        }
        let connections = try {
            let connection = try connect()
            defer { connection.close() }
            try Migrator(connection: connection).verifyCurrent()
            guard apps.count > 1 else { return 2 }
            return try configuredConcurrency()
                ?? max(2, min(NightlyFleet.freeConnections(on: connection) / 2, DatabaseThreads.mostWaitingConnections))
        }()
        let gateCount = Self.sharedGateCount(apps: apps.count, connections: connections)
        let gates = (0..<gateCount).map { _ in
            PostgresQuotaGate(
                conninfo: configuration.database.url, policy: configuration.quotaPolicy, clock: ContinuousClock(),
                logger: logger)
        }
        let record = self.record
        let results = await jobRunner().runSideBySide(
            job: job, apps: apps, concurrency: max(1, connections - gateCount), paced: paced, gates: gates,
            record: { record.add([$0]) }, body)
        for gate in gates { await gate.close() }
        let worst = ExitStatus.worst(results.map(\.exitCode))
        if worst != 0 { throw ExitCode(worst) }
    }

    /// `nightly.concurrency` as a run can hold it: at most ``DatabaseThreads/mostWaitingConnections`` (each waiting
    /// connection holds one of libdispatch's 255 threads), with a warning when the file asks for more.
    func configuredConcurrency() -> Int? {
        guard let configured = configuration.nightly.concurrency else { return nil }
        let most = DatabaseThreads.mostWaitingConnections
        if configured > most {
            logger.warning("nightly.concurrency \(configured) is more than a process can keep waiting; using \(most)")
        }
        return min(configured, most)
    }

    /// How many quota gates the apps of a side-by-side run share: one per core, fewer for fewer apps, and at most
    /// half the `connections` the run may hold (the rest are its jobs'). Each gate owns a connection and a thread;
    /// more of them would cost the server backends and gain nothing, since a round trip takes well under a
    /// millisecond and calls of one app, API and purpose share one.
    static func sharedGateCount(apps: Int, connections: Int) -> Int {
        max(1, min(apps, ProcessInfo.processInfo.activeProcessorCount, connections / 2))
    }
}
