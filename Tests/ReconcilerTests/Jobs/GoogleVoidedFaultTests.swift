import Foundation
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// The Google voided sync against a store that fails: 5xx, dropped connections and truncated bodies are retried and
/// the result is still exact; a malformed answer or one with wrong field types stops the run (exit 1: it is not a
/// passing outage but an answer nobody should guess at) with one line naming the request and the field, nothing of
/// it stored, and the next run continues after the last saved page; a refused page token restarts the window; an
/// access token that expires mid-run is renewed.
// One test at a time: each runs its own simulator on the shared cooperative pool beside the job and its blocking
// database calls, and a dozen at once starve the simulators on a small machine (sign-ins time out).
@Suite("Google voided sync: faults", .serialized)
struct GoogleVoidedFaultTests {
    /// About 8 pages in the first window.
    static let spec = ScenarioSpec(
        seed: 41, subscriptions: 8000, oneTimePurchases: 8000, refunds: 15_000, historyDays: 30, futureDays: 2)

    static var options: SimulatorOptions {
        var options = JobHarness.options(spec)
        JobHarness.unlimited(&options)
        return options
    }

    static let request = "GET /androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases"

    @Test(arguments: [FaultKind.serverError, .dropConnection, .truncatedBody])
    func passingFaultsAreRetriedAndTheResultIsExact(kind: FaultKind) async throws {
        var options = Self.options
        options.faults[.googleVoidedPurchases] = FaultSettings(rates: [kind: 0.3])
        // A schedule with faults on several pages, none on five attempts in a row (that is the next test).
        options.faultSeed = 3
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvretry"))
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            let pages = JobHarness.pages(expected.count)
            try #require(pages >= 6)
            let transport = ScriptedTransport { _ in }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            // Counted by the store: a connection it drops while reused may be retried by the HTTP client itself,
            // unseen by the transport.
            let answered = simulator.statistics().filter { $0.endpoint == .googleVoidedPurchases }
                .reduce(0) { $0 + $1.granted }
            #expect(answered > pages, "no fault struck: the test proves nothing")
            #expect(transport.voidedCalls >= pages)
            #expect(result.counts["pages"] == pages)
        }
    }

    @Test func anOutageThatOutlastsTheRetriesStopsWithExit75AndTheNextRunContinues() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvoutage"))
            let now = harness.stores.now()
            let expected = harness.firstWindowTruth(now: now)
            let pages = JobHarness.pages(expected.count)
            // From the fourth request on, the store answers 5xx.
            let transport = ScriptedTransport { call in
                if call == 4 {
                    simulator.setFaults(FaultSettings(rates: [.serverError: 1]), for: .googleVoidedPurchases)
                }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 75)
            #expect(result.outcome == .partial)
            #expect(result.error?.contains("serverError") == true, "\(result.error ?? "")")
            #expect(transport.voidedCalls == 3 + JobHarness.quickRetries.maxAttempts)
            #expect(
                try harness.storedVoids()
                    == harness.truthPages(
                        recordedFrom: VoidedWindowPlanner.oldestStart(now: now), to: now.addingTimeInterval(-60),
                        pages: 3))

            simulator.clearFaults()
            let rerun = ScriptedTransport { _ in }
            let next = try await harness.googleVoided(transport: rerun)
            #expect(next.exitCode == 0, "\(next.error ?? "")")
            #expect(rerun.voidedCalls == pages - 3)
            #expect(try harness.storedVoids() == expected)
        }
    }

    @Test(arguments: [FaultKind.malformedJSON])
    func aMalformedAnswerStopsTheRunNamingTheRequestAndNothingOfItIsStored(kind: FaultKind) async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvmalformed"))
            let now = harness.stores.now()
            let start = VoidedWindowPlanner.oldestStart(now: now)
            let expected = harness.firstWindowTruth(now: now)
            let pages = JobHarness.pages(expected.count)
            // The fourth page's answer is spoiled.
            let transport = ScriptedTransport { call in
                if call == 4 { simulator.setFaults(FaultSettings(rates: [kind: 1]), for: .googleVoidedPurchases) }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 1)
            #expect(result.outcome == .failed)
            let line = try #require(result.error)
            #expect(line.contains(Self.request), "\(line)")
            #expect(line.contains("malformedResponse"), "\(line)")
            if kind == .wrongFieldTypes {
                #expect(line.contains("field voidedPurchases[0].voidedTimeMillis"), "\(line)")
            }
            #expect(transport.voidedCalls == 4, "a malformed answer is not retried")
            // Exactly the three good pages are stored, with the token after the third.
            #expect(
                try harness.storedVoids()
                    == harness.truthPages(recordedFrom: start, to: now.addingTimeInterval(-60), pages: 3))
            #expect(try harness.checkpoint().pagesDone == 3)

            simulator.clearFaults()
            let rerun = ScriptedTransport { _ in }
            let next = try await harness.googleVoided(transport: rerun)
            #expect(next.exitCode == 0, "\(next.error ?? "")")
            #expect(rerun.voidedCalls == pages - 3, "the rerun fetched finished pages again")
            #expect(try harness.storedVoids() == expected)
        }
    }

    /// Rows of the wrong JSON types are the store's odd data, not a broken answer: they are quarantined, every
    /// other row lands, the window drains, and a rerun changes nothing.
    @Test func rowsOfWrongTypesAreQuarantinedAndTheRestLands() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvwrongtypes"))
            let now = harness.stores.now()
            let expected = harness.firstWindowTruth(now: now)
            let transport = ScriptedTransport { call in
                if call == 4 {
                    simulator.setFaults(FaultSettings(rates: [.wrongFieldTypes: 1]), for: .googleVoidedPurchases)
                }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let quarantined = result.counts["quarantined"] ?? 0
            #expect(quarantined > 0)
            let stored = try harness.storedVoids()
            #expect(stored.isSubset(of: expected))
            #expect(stored.count + quarantined == expected.count, "every row is either stored or quarantined")
            #expect(try harness.checkpoint().pageToken == nil, "the window drained")
            let open: Int = try harness.connection().query(
                "SELECT count(*) AS n FROM quarantine WHERE resolved_at IS NULL AND reason LIKE '%wrong type%'")[0]
                .decode("n")
            #expect(open == quarantined)

            let rerun = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(rerun.exitCode == 0, "\(rerun.error ?? "")")
            #expect(try harness.storedVoids() == stored)
        }
    }

    @Test func aRefusedPageTokenRestartsTheWindowAndStillLandsExactly() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvtoken"))
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            let pages = JobHarness.pages(expected.count)
            // The token of the fourth request is refused, once.
            let transport = ScriptedTransport { call in
                if call == 4 {
                    simulator.setFaults(FaultSettings(rates: [.expiredPageToken: 1]), for: .googleVoidedPurchases)
                } else if call == 5 {
                    simulator.clearFaults()
                }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(result.counts["token_restarts"] == 1)
            #expect(transport.voidedCalls == 3 + 1 + pages)
            #expect(try harness.storedVoids() == expected)
            #expect(try harness.checkpoint().highWater == harness.stores.now().addingTimeInterval(-60))
        }
    }

    @Test func aWindowResumedAfterItsTokenExpiredAndItsStartLeftTheThirtyDaysStillLands() async throws {
        var options = Self.options
        options.voidedPageTokenLifetimeSeconds = 86_400
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvstale"))
            let firstNow = harness.stores.now()
            let firstStart = VoidedWindowPlanner.oldestStart(now: firstNow)
            let firstEnd = firstNow.addingTimeInterval(-60)
            // A run stopped (SIGTERM) after three pages, resumed two days later: its token has expired, and the
            // start of its window is now older than Google keeps.
            let shutdown = ShutdownSignal()
            let stopping = ScriptedTransport { call in if call == 3 { shutdown.request() } }
            let first = try await harness.googleVoided(transport: stopping, shutdown: shutdown)
            #expect(first.exitCode == 75)
            #expect(try harness.checkpoint().pagesDone == 3)
            let early = harness.truthPages(recordedFrom: firstStart, to: firstEnd, pages: 3)
            // No store call leaves after the signal (issue 27), the Orders calls that would price these pages included:
            // the quantity a final refund after partial ones takes from its order waits for the next run, so the
            // stopped run is compared on what the voided list itself says.
            func listed(_ voids: Set<StoredVoid>) -> Set<String> {
                Set(voids.map { "\($0.orderId) \($0.partKey) \($0.voidedMillis)" })
            }
            #expect(listed(try harness.storedVoids()) == listed(early))

            simulator.clock.advance(millis: 2 * 86_400_000)
            let secondNow = harness.stores.now()
            let oldest = VoidedWindowPlanner.oldestStart(now: secondNow)
            let second = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(second.exitCode == 0, "\(second.error ?? "")")
            #expect(second.counts["token_restarts"] == 1)
            // The window in flight is finished from what Google still keeps; what it no longer keeps is a gap.
            #expect(try harness.storedVoids() == early.union(harness.truthVoids(recordedFrom: oldest, to: firstEnd)))
            #expect(try harness.checkpoint().highWater == firstEnd)
            let gaps = try harness.connection().query("SELECT gap_from, gap_to FROM sync_gap")
            #expect(gaps.count == 1)
            #expect(try gaps.first?.decode("gap_from", as: Date.self) == firstStart)
            #expect(try gaps.first?.decode("gap_to", as: Date.self) == oldest)

            // The next run carries on from the high-water mark as usual.
            let third = try await harness.googleVoided(transport: ScriptedTransport { _ in })
            #expect(third.exitCode == 0, "\(third.error ?? "")")
            #expect(
                try harness.storedVoids()
                    == early.union(harness.truthVoids(recordedFrom: oldest, to: secondNow.addingTimeInterval(-60))))
        }
    }

    @Test func anAccessTokenThatExpiresMidRunIsRenewedTransparently() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvexpired"))
            let expected = harness.firstWindowTruth(now: harness.stores.now())
            let pages = JobHarness.pages(expected.count)
            // Access tokens live an hour on the simulator clock; before the fourth request two hours pass there.
            let transport = ScriptedTransport { call in
                if call == 4 { simulator.clock.advance(millis: 2 * 3_600_000) }
            }
            let result = try await harness.googleVoided(transport: transport)
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            #expect(try harness.storedVoids() == expected)
            // One request was answered 401 and sent again with a new token.
            #expect(transport.voidedCalls == pages + 1)
            #expect(harness.voidedGranted == pages)
            let signIns = simulator.statistics().first { $0.endpoint == .googleToken }?.granted
            #expect(signIns == 2)
        }
    }

    @Test func aRevokedKeyExits78WithOneClearLineAndNoSecret() async throws {
        try await StoreSimulator.withRunning(Self.options) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "gvrevoked")
            // The same account and key id, but a key Google no longer accepts (deleted in Google Cloud).
            let stale = try SimulatorKeys.generate(seed: Self.spec.seed).serviceAccount
            let keyFile = try #require(stores.app(.google).serviceAccountFile)
            try Data(stale.json(tokenURI: simulator.googleTokenURL.absoluteString).utf8)
                .write(to: URL(fileURLWithPath: keyFile))
            let outcome = try await BuiltExecutable("storerecon").finish([
                "sync", "google-voided", "--config", stores.configPath,
            ])
            #expect(outcome.status == 78, "\(outcome.stderr)")
            #expect(outcome.stderr.contains("invalidGrant"), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("check the host clock"), "\(outcome.stderr)")
            #expect(outcome.stderr.contains(stale.clientEmail))
            // Neither the key, nor the signed assertion, nor any access token.
            let keyLines = stale.privateKeyPEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }
            #expect(!keyLines.contains { outcome.stderr.contains($0) })
            #expect(!outcome.stderr.contains("PRIVATE KEY"))
            #expect(!outcome.stderr.contains("eyJ"), "a JWT in the output")
            #expect(!outcome.stderr.contains("ya29."), "an access token in the output")
            #expect(JobHarness(stores: stores).voidedGranted == 0)
            let run = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT outcome FROM job_run WHERE job = $1", [GoogleVoidedSync.job])
            #expect(try run.first?.decode("outcome", as: String.self) == "config")
        }
    }
}
