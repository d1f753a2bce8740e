import Foundation
import PlayDeveloperAPI
import Postgres
import Reconciler
import StoreHTTP
import StoreSimulator
import TestSupport
import Testing

/// The stores' documented odd answers, each from a simulator fault switch over real HTTP, through the jobs as the CLI
/// runs them: what each answer means decides the job's outcome and exit code.
@Suite("Store answers mean what the stores say", .serialized)
struct StoreAnswerJobTests {
    static let spec = ScenarioSpec(
        seed: 47, subscriptions: 1500, oneTimePurchases: 1500, refunds: 1500, historyDays: 30, futureDays: 5,
        sandboxShare: 0)

    static func withStores(
        _ faults: [SimulatorEndpoint: FaultSettings] = [:], prefix: String, extraYAML: String = "",
        _ body: (StoreSimulator, JobHarness) async throws -> Void
    ) async throws {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        options.faults = faults
        options.faultSeed = 11
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: prefix, extraYAML: extraYAML)
            try await body(simulator, JobHarness(stores: stores))
        }
    }

    func appleRefunds(_ harness: JobHarness) async throws -> JobRunner.Result {
        let stores = harness.stores
        let app = stores.app(.apple)
        let configuration = stores.configuration
        return try await harness.runner().run(job: AppleRefundSync.job, app: app, waitForLock: false) { environment in
            let access = try StoreClients.apple(
                for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
            try await AppleRefundSync(app: app, configuration: configuration, access: access)
                .run(.incremental, in: environment)
        }
    }

    // MARK: Apple 401

    /// A refused key stops the refund sync at the first 401 with exit 78 and one line, wherever it strikes: no
    /// customer is counted as failed and no further customer is asked.
    @Test(arguments: [SimulatorEndpoint.appleRefundHistory, .appleNotificationHistory])
    func appleRefusedCredentialsStopTheRefundSyncAtOnceWithExit78(endpoint: SimulatorEndpoint) async throws {
        try await Self.withStores(
            [endpoint: FaultSettings(rates: [.expiredAccessToken: 1])], prefix: "answer401",
            extraYAML: "sync: { appleConcurrency: 2 }\n"
        ) { simulator, harness in
            let result = try await appleRefunds(harness)
            #expect(result.exitCode == 78, "\(result.error ?? "")")
            #expect(result.outcome == .config)
            let line = try #require(result.error)
            #expect(line.contains("HTTP 401") && line.contains("Apple refused the credentials"), "\(line)")
            #expect(!line.contains("\n"))
            #expect(result.counts["customer_errors"] == nil)
            // At most one customer per reader was in hand when the first 401 came back.
            #expect((result.counts["customers"] ?? 0) <= 2)
        }
    }

    /// A customer of the scenario's Apple app.
    static func appleCustomer(_ simulator: StoreSimulator, _ harness: JobHarness) throws -> String {
        let app = harness.stores.app(.apple)
        return try #require(simulator.subscriptionTruth().first { $0.app == app.id }?.storeId)
    }

    /// `backfill apple-refunds --ids` of these customers on the scenario's Apple app.
    func appleBackfill(_ ids: [String], _ harness: JobHarness) async throws -> JobRunner.Result {
        let stores = harness.stores
        let app = stores.app(.apple)
        return try await harness.runner().run(job: AppleRefundSync.backfillJob, app: app, waitForLock: false) {
            environment in
            let access = try StoreClients.apple(
                for: app, configuration: stores.configuration, gate: environment.gate, logger: environment.logger)
            try await AppleRefundSync(app: app, configuration: stores.configuration, access: access)
                .run(.backfillIds(ids), in: environment)
        }
    }

    // MARK: Apple "not found, retryable"

    @Test func appleRetryableNotFoundLeavesTheCustomerQueuedAndTheRunExits75() async throws {
        try await Self.withStores(
            [.appleRefundHistory: FaultSettings(rates: [.notFoundRetryable: 1])], prefix: "answer404",
            extraYAML: "sync: { appleConcurrency: 1, appleSweepCustomers: 0 }\n"
        ) { simulator, harness in
            // One customer only, so the test spends one customer's retries (0.5 + 1 + 2 s at most).
            let connection = try harness.connection()
            defer { connection.close() }
            let customer = try Self.appleCustomer(simulator, harness)
            let result = try await appleBackfill([customer], harness)
            #expect(result.exitCode == 75, "\(result.error ?? "")")
            #expect(result.counts["customers_retry_later"] == 1)
            #expect(result.counts["unknown_customers"] == nil)
            let granted = simulator.statistics().filter { $0.endpoint == .appleRefundHistory }.map(\.granted)
            #expect(granted.reduce(0, +) == 4, "retried with backoff: four attempts in all")
            let queued = try connection.query(
                "SELECT queued_at IS NOT NULL AS queued FROM apple_refund_cursor WHERE original_transaction_id = $1",
                [customer])
            #expect(try queued[0].decode("queued", as: Bool.self))
        }
    }

    /// A customer id Apple refuses as malformed (400, 4000006: a bad line of an old import) is finished, not asked
    /// again each night with the run failing; the others are read as usual.
    @Test func aCustomerIdAppleRefusesAsMalformedIsFinishedAndTheRunGoesOn() async throws {
        try await Self.withStores(
            prefix: "answer400", extraYAML: "sync: { appleConcurrency: 1, appleSweepCustomers: 0 }\n"
        ) { simulator, harness in
            let customer = try Self.appleCustomer(simulator, harness)
            let first = try await appleBackfill(["12-34", customer], harness)
            let connection = try harness.connection()
            defer { connection.close() }
            #expect(first.exitCode == 0, "\(first.error ?? "")")
            #expect(first.counts["unknown_customers"] == 1)
            #expect(first.counts["customer_errors"] == nil)
            let finished = try connection.query(
                "SELECT queued_at IS NULL AS done FROM apple_refund_cursor WHERE original_transaction_id = '12-34'")
            #expect(try finished[0].decode("done", as: Bool.self))
        }
    }

    // MARK: Google 410 Gone

    @Test func googleGoneEndsTheSubscriptionAndClearsItsFlag() async throws {
        try await Self.withStores(
            [.googleSubscriptionsV2: FaultSettings(rates: [.gone: 1])], prefix: "answer410"
        ) { simulator, harness in
            let recheck = RecheckHarness(harness: harness)
            try recheck.insertStarted(simulator.subscriptionTruth())
            let app = harness.stores.app(.google)
            let connection = try harness.connection()
            defer { connection.close() }
            let flagged = try connection.execute(
                """
                UPDATE subscription SET flagged_at = now(), flag_reason = 'notification', entitled = true
                WHERE id IN (SELECT id FROM subscription WHERE app_id = $1 ORDER BY id LIMIT 20)
                """, [app.id])
            try #require(flagged == 20)
            let results = try await recheck.recheck()
            let result = try #require(results[app.id])
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let asked = result.counts["asked"] ?? 0
            #expect(asked >= 20)
            #expect(result.counts["bad_answers"] == nil)
            let rows = try connection.query(
                """
                SELECT count(*) FILTER (WHERE last_checked_at IS NOT NULL) AS checked,
                       count(*) FILTER (WHERE last_checked_at IS NOT NULL AND state = 'expired' AND NOT entitled
                                        AND store_state = $2 AND auto_renew IS FALSE) AS gone,
                       count(*) FILTER (WHERE flagged_at IS NOT NULL) AS flagged
                FROM subscription WHERE app_id = $1
                """, [app.id, GoogleStatusInterpreter.goneStoreState])
            #expect(try rows[0].decode("checked", as: Int.self) == asked)
            #expect(try rows[0].decode("gone", as: Int.self) == asked)
            #expect(try rows[0].decode("flagged", as: Int.self) == 0)
        }
    }

    // MARK: Google daily limit

    /// Both forms of the spent day (403 `dailyLimitExceeded`; 403 PERMISSION_DENIED whose ErrorInfo names a per-day
    /// `quota_limit`) stop the sync with exit 75, and the gate remembers: the next run makes no call at all.
    @Test(arguments: [0, 1])
    func googleDailyLimitStopsWithExit75AndTheGateKeepsTheDay(form: Int) async throws {
        try await Self.withStores(
            [.googleVoidedPurchases: FaultSettings(rates: [.dailyLimit: 1])], prefix: "answer403"
        ) { simulator, harness in
            if form == 1 {
                // Spend the first form on a call of the simulator's own, so the job meets the ErrorInfo form.
                let path =
                    "androidpublisher/v3/applications/\(harness.stores.app(.google).packageName ?? "")"
                    + "/purchases/voidedpurchases"
                _ = try await CurlTransport().send(
                    HTTPRequest(url: simulator.googleAPIBaseURL.appendingPathComponent(path)))
            }
            let transport = ScriptedTransport { _ in }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 75, "\(result.error ?? "")")
            let line = try #require(result.error)
            #expect(line.contains("dailyQuotaExhausted"), "\(line)")
            #expect(!line.contains("permissionDenied"))
            #expect(transport.voidedCalls == 1, "a spent day is not retried")
            let again = ScriptedTransport { _ in }
            let next = try await harness.googleVoided(transport: again)
            #expect(next.exitCode == 75)
            #expect(again.voidedCalls == 0, "the gate was told: no call until the Pacific day turns")
        }
    }

    // MARK: Google Retry-After of any content

    /// The first four attempts of the first page get a 503 whose `Retry-After` is odd (non-ASCII, oversized, not a
    /// number); the fifth is answered. Nothing crashes, the client backs off on its own policy, the ledger is exact.
    @Test func googleRetryAfterOfAnyContentIsRetriedAndTheResultIsExact() async throws {
        try await Self.withStores(prefix: "answerretry") { simulator, harness in
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            let transport = ScriptedTransport { call in
                if call == 1 {
                    simulator.setFaults(FaultSettings(rates: [.oddRetryAfter: 1]), for: .googleVoidedPurchases)
                } else if call == 5 {
                    simulator.clearFaults()
                }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            #expect(transport.voidedCalls == JobHarness.pages(expected.count) + 4)
        }
    }

    // MARK: OAuth audience behind a proxy

    /// The key file names Google's token URL; the configuration sends sign-ins to another address (the simulator,
    /// standing in for a proxy that passes the assertion on to Google): the assertion's `aud` stays Google's URL.
    @Test func theAssertionAudienceStaysTheKeyFilesTokenURIBehindAProxy() async throws {
        try await Self.withStores(
            [.googleToken: FaultSettings(rates: [.proxiedTokenAudience: 1])], prefix: "answeraud"
        ) { simulator, harness in
            let keyFile = try #require(harness.stores.app(.google).serviceAccountFile)
            try Data(simulator.keys.serviceAccount.json(tokenURI: "https://oauth2.googleapis.com/token").utf8)
                .write(to: URL(fileURLWithPath: keyFile))
            #expect(harness.stores.app(.google).tokenURL == simulator.googleTokenURL.absoluteString)
            let transport = ScriptedTransport { _ in }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.counts["pages"] ?? 0 > 0)
        }
    }
}
