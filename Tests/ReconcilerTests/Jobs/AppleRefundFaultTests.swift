import Foundation
import Postgres
import Reconciler
import StoreSimulator
import TestSupport
import Testing

/// Hostile and failing answers during the Apple refund sync: rejected payloads are never stored and are reported;
/// retryable failures are retried; progress is kept.
@Suite("Apple refund sync under faults")
struct AppleRefundFaultTests {
    static let spec = ScenarioSpec(
        seed: 31, subscriptions: 3000, oneTimePurchases: 0, refunds: 300, historyDays: 90, futureDays: 5,
        sandboxShare: 0)

    func run(_ stores: SimulatedStores) async throws -> JobRunner.Result {
        let harness = JobHarness(stores: stores)
        let app = stores.app(.apple)
        let configuration = stores.configuration
        return try await harness.runner().run(job: AppleRefundSync.job, app: app, waitForLock: false) { environment in
            let access = try StoreClients.apple(
                for: app, configuration: configuration, gate: environment.gate, logger: environment.logger)
            try await AppleRefundSync(app: app, configuration: configuration, access: access)
                .run(.incremental, in: environment)
        }
    }

    func appleRefunds(_ stores: SimulatedStores) throws -> Int {
        try PostgresConnection(conninfo: stores.conninfo).query(
            "SELECT count(*) AS n FROM refund WHERE platform = 'apple'")[0].decode("n")
    }

    @Test(arguments: [FaultKind.badSignature, .wrongBundleId])
    func rejectedPayloadsAreNeverStoredAndTheRunSaysSo(_ fault: FaultKind) async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        for endpoint in [SimulatorEndpoint.appleNotificationHistory, .appleRefundHistory] {
            options.faults[endpoint] = FaultSettings(rates: [fault: 1])
        }
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applefault", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let result = try await run(stores)
            #expect(result.exitCode == 1)
            #expect((result.counts["verification_failed"] ?? 0) > 0)
            #expect(result.error?.contains("failed verification") == true)
            #expect(try appleRefunds(stores) == 0)
            // Once the store answers correctly again, the next run stores everything.
            simulator.clearFaults()
            let clean = try await run(stores)
            #expect(clean.exitCode == 0, "\(clean.error ?? "")")
            #expect(try appleRefunds(stores) > 0)
        }
    }

    @Test func anUntrustedRootRejectsEverything() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "appleroot", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            // Trust another root than the one the simulator signs with.
            let other = try SigningChain.generate()
            let root = stores.app(.apple).rootCertificates[0]
            try Data(other.rootDER).write(to: URL(fileURLWithPath: root))
            let result = try await run(stores)
            #expect(result.exitCode == 1)
            #expect(try appleRefunds(stores) == 0)
        }
    }

    @Test func serverErrorsAreRetriedAndTheLedgerStillLands() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        options.faultSeed = 5
        for endpoint in [SimulatorEndpoint.appleNotificationHistory, .appleRefundHistory] {
            options.faults[endpoint] = FaultSettings(rates: [.serverError: 0.2])
        }
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "apple5xx", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            var result = try await run(stores)
            // Retries absorb most failures; a run that still ran out of retries ends 75 with progress saved.
            if result.exitCode == 75 {
                simulator.clearFaults()
                result = try await run(stores)
            }
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let truth = simulator.groundTruth().appleRefunds.filter { $0.revocationDate <= simulator.clock.nowMillis() }
            #expect(try appleRefunds(stores) == truth.count)
        }
    }

    @Test func malformedAnswersAreClearErrorsAndNothingWrongIsStored() async throws {
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        options.faults[.appleRefundHistory] = FaultSettings(rates: [.malformedJSON: 1])
        try await StoreSimulator.withRunning(options) { simulator in
            let stores = try SimulatedStores(
                simulator: simulator, databasePrefix: "applebad", extraYAML: "sync: { appleSweepCustomers: 0 }\n")
            let result = try await run(stores)
            // Each customer's unreadable answer is that customer's error (its log line names the request); the
            // others are still asked, and the run says how many were left.
            #expect(result.exitCode == 1)
            #expect((result.counts["customer_errors"] ?? 0) > 1, "\(result.counts)")
            #expect(result.error?.contains("customers could not be read") == true, "\(result.error ?? "")")
            // The notifications' refunds were stored; the customers stay queued for the next run.
            let queued = try PostgresConnection(conninfo: stores.conninfo).query(
                "SELECT count(*) AS n FROM apple_refund_cursor WHERE queued_at IS NOT NULL")[0].decode(
                    "n", as: Int.self)
            #expect(queued > 0)
            simulator.clearFaults()
            #expect(try await run(stores).exitCode == 0)
            #expect(
                try PostgresConnection(conninfo: stores.conninfo).query(
                    "SELECT count(*) AS n FROM apple_refund_cursor WHERE queued_at IS NOT NULL")[0].decode(
                        "n", as: Int.self) == 0)
        }
    }
}
