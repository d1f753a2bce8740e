import Foundation
import PlayDeveloperAPI
import Postgres
import Reconciler
import StoreHTTP
import StoreSimulator
import TestSupport

/// What the Google voided hardening tests need beyond `JobHarness`: a client on a scripted transport with quick
/// retries, the checkpoint, the simulator's counts, and the number of pages a window takes.
extension JobHarness {
    /// Retries as in production, but with backoffs of milliseconds so a test with many 5xx answers stays quick.
    static let quickRetries = RetryPolicy(maxAttempts: 5, baseDelay: 0.02, maxDelay: 0.1, maxTotalTime: 30)

    /// One Google voided sync (or backfill) whose client sends through `transport` with `retryPolicy`; otherwise as
    /// the CLI runs it (JobRunner: lock, job_run, counting gate).
    func googleVoided(
        _ mode: GoogleVoidedSync.Mode = .incremental, transport: any HTTPTransport,
        retryPolicy: RetryPolicy = quickRetries, shutdown: ShutdownSignal = ShutdownSignal(), dryRun: Bool = false
    ) async throws -> JobRunner.Result {
        let app = stores.app(.google)
        let configuration = voidedConfiguration
        let job = mode == .incremental ? GoogleVoidedSync.job : GoogleVoidedSync.backfillJob
        return try await runner(shutdown: shutdown, dryRun: dryRun).run(job: job, app: app, waitForLock: false) {
            environment in
            let key = try ServiceAccountKey.load(fromFile: app.serviceAccountFile ?? "", logger: environment.logger)
            var settings = PlayDeveloperClient.Configuration(retryPolicy: retryPolicy)
            if let base = app.baseURL.flatMap(URL.init(string:)) { settings.baseURL = base }
            settings.tokenURL = app.tokenURL.flatMap(URL.init(string:))
            let client = PlayDeveloperClient(
                app: app.id, key: key, configuration: settings, transport: transport, quotaGate: environment.gate,
                logger: environment.logger)
            _ = try await GoogleVoidedSync(app: app, configuration: configuration, client: client)
                .run(mode, in: environment)
        }
    }

    /// The checkpoint of the incremental job (or of backfills).
    func checkpoint(_ job: String = GoogleVoidedSync.job) throws -> SyncCheckpoint {
        try SyncCheckpoint.load(job: job, app: stores.app(.google).id, on: connection())
    }

    /// The simulator's counts for the Google app's voided-purchases endpoint.
    func voidedStatistics() -> EndpointStatistics? {
        let app = stores.app(.google).id
        return stores.simulator.statistics().first { $0.app == app && $0.endpoint == .googleVoidedPurchases }
    }

    /// Calls the simulator granted to the Google app's voided-purchases endpoint.
    var voidedGranted: Int { voidedStatistics()?.granted ?? 0 }

    /// Pages a window of `rows` rows takes at 1000 per page (an empty window is one page).
    static func pages(_ rows: Int) -> Int {
        max(1, (rows + GoogleVoidedSync.pageSize - 1) / GoogleVoidedSync.pageSize)
    }

    /// The voids recorded in the incremental window a first run at `now` asks for.
    func firstWindowTruth(now: Date) -> Set<StoredVoid> {
        truthVoids(recordedFrom: VoidedWindowPlanner.oldestStart(now: now), to: now.addingTimeInterval(-60))
    }

    /// The first `pages` pages of a window's truth, in the store's order (recorded time, then as listed).
    func truthPages(recordedFrom from: Date, to: Date, pages: Int) -> Set<StoredVoid> {
        let all = orderedTruth(recordedFrom: from, to: to)
        return Set(all.prefix(pages * GoogleVoidedSync.pageSize))
    }

    /// A window's truth in the order the store lists it.
    func orderedTruth(recordedFrom from: Date, to: Date) -> [StoredVoid] {
        let truth = stores.simulator.groundTruth()
        let parts = JobHarness.parts(truth)
        let low = Int64(from.timeIntervalSince1970 * 1000)
        let high = Int64(to.timeIntervalSince1970 * 1000)
        let app = stores.app(.google).id
        return truth.googleVoids.filter {
            $0.app == app && $0.recorded && $0.recordedTimeMillis >= low && $0.recordedTimeMillis <= high
        }
        .map { void in
            StoredVoid(
                orderId: void.orderId,
                partKey: void.voidedQuantity.map { "\(void.voidedTimeMillis):\($0)" } ?? "",
                purchaseToken: void.purchaseToken, voidedMillis: void.voidedTimeMillis,
                reason: void.voidedReason, source: void.voidedSource,
                quantity: JobHarness.units(void, parts: parts))
        }
    }
}
