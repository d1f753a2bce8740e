import Foundation
import Logging
import Payouts
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreHTTP
import StoreSimulator
import TestSupport
import Testing

/// `PayoutSync` over real HTTP against the simulator's Cloud Storage bucket, through a counting quota gate.
@Suite("PayoutSync against the simulator")
struct PayoutSyncTests {
    /// Forty-five days of history: whatever the day of the month, the previous US-Pacific month has refunds and so
    /// a closed earnings report (with 29 days, from about the 27th on, the few days of it left had none).
    static func options(historyDays: Int = 45) -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 2626, anchorMillis: now, subscriptions: 600, oneTimePurchases: 200, refunds: 200,
                historyDays: historyDays, futureDays: 1, sandboxShare: 0))
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        return options
    }

    /// A counting gate in front of the published limits.
    actor CountingGate: QuotaGate {
        let inner = LocalQuotaGate(clock: ContinuousClock())
        var calls: [StoreAPI: Int] = [:]
        /// The first this many grants of each API say the call had to leave a second ago (a loaded host).
        let lateGrants: Int

        init(lateGrants: Int = 0) {
            self.lateGrants = lateGrants
        }

        func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
            try await inner.acquire(app: app, api: api, purpose: purpose)
            calls[api, default: 0] += 1
            return calls[api, default: 0] <= lateGrants ? .now - .seconds(1) : nil
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
            try Self.refundFortyDaysBack(app, on: connection)
            let gate = CountingGate()
            let sync = try Self.sync(app, simulator: simulator, gate: gate, on: connection)

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

    /// A report an operator dropped stays dropped: the next sync knows the object's generation and neither
    /// downloads nor stores it; the other reports are skipped as stored.
    @Test func aDroppedReportIsNotFetchedAgain() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "payoutkept", payouts: true)
            let app = stores.app(.google)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try Self.refundFortyDaysBack(app, on: connection)
            let sync = try Self.sync(app, simulator: simulator, gate: CountingGate(), on: connection)
            let first = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(first.inserted >= 1)
            let id: Int64 = try connection.query("SELECT min(id) AS id FROM payout_report")[0].decode("id")
            let dropped = try PayoutStore(connection: connection).drop(id: id, reason: "test: not ours")
            guard case .dropped = dropped else {
                Issue.record("\(dropped)")
                return
            }

            let second = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(second.keptDropped == 1 && second.fetched == 0 && second.skipped == first.inserted - 1)
            let reports: Int = try connection.query("SELECT count(*)::int AS n FROM payout_report")[0].decode("n")
            #expect(reports == first.inserted - 1)
        }
    }

    /// A grant the transport gets too late is not used: the gate is asked again (twice at most, then the call goes
    /// whatever its time), as for the Google client, so a report call too leaves within its grant's window.
    @Test func aGrantThatReachesTheTransportLateIsAskedForAgain() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "payoutlate", payouts: true)
            let app = stores.app(.google)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }
            try Self.refundFortyDaysBack(app, on: connection)
            let gate = CountingGate(lateGrants: 3)
            let sync = try Self.sync(app, simulator: simulator, gate: gate, on: connection)

            let run = try await sync.run(month: nil, now: Date(), purpose: .incremental)
            #expect(run.inserted >= 1)
            // The first call's two late grants were never sent, nor the second call's one; the third grant of the
            // first call was used whatever its time.
            let answered = simulator.statistics().filter { $0.endpoint == .googleStorage }.reduce(0) { $0 + $1.granted }
            let gated = await gate.calls[.googleCloudStorage] ?? 0
            #expect(answered > 1 && gated == answered + 2, "\(gated) gated, \(answered) answered")
        }
    }

    /// One ledger refund 40 days back: every earnings month the bucket has is wanted.
    static func refundFortyDaysBack(_ app: AppConfig, on connection: PostgresConnection, days: Int = 40) throws {
        try connection.execute(
            """
            INSERT INTO refund (app_id, platform, order_id, refunded_at, refund_type, payload)
            VALUES ($1, 'google', 'GPA.0', now() - make_interval(days => $2), 'full', '{}')
            """, [app.id, days])
    }

    /// The app's earnings sync against the simulator's bucket, through `gate`.
    static func sync(
        _ app: AppConfig, simulator: StoreSimulator, gate: CountingGate, on connection: PostgresConnection
    ) throws -> PayoutSync {
        let key = try ServiceAccountKey.load(fromFile: try #require(app.serviceAccountFile))
        let client = CloudStorageClient(
            app: app.id, key: key, tokenURL: app.tokenURL.flatMap(URL.init(string:)),
            baseURL: simulator.baseURL, transport: CurlTransport(maxResponseBytes: 1 << 26), gate: gate,
            policy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.05, maxTotalTime: 5),
            logger: Logger(label: "test"))
        return PayoutSync(
            app: app.id, source: .google(client, bucket: try #require(app.earningsBucket)), connection: connection,
            logger: Logger(label: "test"))
    }
}
