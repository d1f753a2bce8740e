import Foundation
import Logging
import Payouts
import PlayDeveloperAPI
import Postgres
import RateLimiting
import StoreHTTP
import StoreSimulator
import TestSupport
import Testing

/// `PayoutSync` over real HTTP against the simulator's Cloud Storage bucket, through a counting quota gate.
@Suite("PayoutSync against the simulator")
struct PayoutSyncTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 2626, anchorMillis: now, subscriptions: 600, oneTimePurchases: 200, refunds: 200,
                historyDays: 29, futureDays: 1, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        return options
    }

    /// A counting gate in front of the published limits.
    actor CountingGate: QuotaGate {
        let inner = LocalQuotaGate(clock: ContinuousClock())
        var calls: [StoreAPI: Int] = [:]

        func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
            try await inner.acquire(app: app, api: api, purpose: purpose)
            calls[api, default: 0] += 1
            return nil
        }

        func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
            await inner.report(app: app, api: api, feedback: feedback)
        }
    }

    @Test func aTruncatedAnswerStoresNothingAndTheNextRunFetchesEverythingOnce() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "payoutsync", payouts: true)
            let app = stores.app(.google)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            // One ledger refund 40 days back: every earnings month the bucket has is wanted.
            try connection.execute(
                """
                INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload)
                VALUES ($1, 'google', 'GPA.0', now() - interval '40 days', 'full', '{}')
                """, [app.id])
            let gate = CountingGate()
            let key = try ServiceAccountKey.load(fromFile: try #require(app.serviceAccountFile))
            let client = CloudStorageClient(
                app: app.id, key: key, tokenURL: app.tokenURL.flatMap(URL.init(string:)),
                baseURL: simulator.baseURL, transport: CurlTransport(maxResponseBytes: 1 << 26), gate: gate,
                policy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.05, maxTotalTime: 5),
                logger: Logger(label: "test"))
            let sync = PayoutSync(
                app: app.id, source: .google(client, bucket: try #require(app.earningsBucket)), connection: connection,
                logger: Logger(label: "test"))

            simulator.setFaults(FaultSettings(rates: [.truncatedBody: 1]), for: .googleStorage)
            await #expect(throws: PayoutError.self) {
                _ = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            }
            let none: Int = try connection.query("SELECT count(*) AS n FROM payout_report")[0].decode("n")
            #expect(none == 0)

            simulator.clearFaults()
            let first = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(first.inserted >= 1 && first.fetched == first.inserted && first.replaced == 0)
            let reports: Int = try connection.query("SELECT count(*) AS n FROM payout_report")[0].decode("n")
            #expect(reports == first.inserted)
            let second = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(second.fetched == 0 && second.skipped == first.inserted)
            // Every store call passed the gate: the simulator answered no more than the gate let through.
            let answered = simulator.statistics().filter { $0.endpoint == .googleStorage }.reduce(0) { $0 + $1.granted }
            let gated = await gate.calls[.googleCloudStorage] ?? 0
            #expect(answered > 0 && gated == answered, "\(gated) gated, \(answered) answered")
        }
    }
}
