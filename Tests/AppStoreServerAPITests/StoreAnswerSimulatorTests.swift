import AppStoreServerAPI
import Foundation
import StoreHTTP
import StoreSimulator
import Testing

/// Apple's documented odd answers, over real HTTP from the store simulator's fault switches: 401, the "not found"
/// codes (retryable and final) and `Retry-After` headers of any content.
@Suite("App Store answers mean what Apple says")
struct StoreAnswerSimulatorTests {
    static let transactionId = "2000000000000001"

    /// Runs `body` with a client of the simulator's Apple app whose retries sleep on a manual clock.
    func withClient(
        _ fault: FaultKind, rate: Double = 1,
        _ body: (StoreSimulator, AppStoreServerClient, ManualTiming, CountingQuotaGate) async throws -> Void
    ) async throws {
        var options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, refunds: 2))
        options.authUsesWallClock = true
        // Retries here sleep on a manual clock: the simulator's per-second limit must not answer in their place.
        options.quotas.appleRefundHistoryPerSecond = 1_000_000
        options.faults[.appleRefundHistory] = FaultSettings(rates: [fault: rate])
        try await StoreSimulator.withRunning(options) { simulator in
            let app = try #require(simulator.apps.first { $0.platform == .apple })
            let key = try AppStoreSigningKey(
                privateKeyPEM: simulator.keys.appStoreKey.privateKeyPEM, keyId: simulator.keys.appStoreKey.keyId,
                issuerId: simulator.keys.appStoreKey.issuerId, bundleId: app.storeId)
            let timing = ManualTiming(fraction: 1)
            let gate = CountingQuotaGate()
            let client = AppStoreServerClient(
                configuration: .init(
                    app: app.id, productionBaseURL: simulator.appleProductionBaseURL,
                    sandboxBaseURL: simulator.appleSandboxBaseURL, requestTimeout: 10,
                    retryPolicy: RetryPolicy(maxAttempts: 4, baseDelay: 0.5, maxDelay: 30, maxTotalTime: 120)),
                key: key, transport: CurlTransport(), quotaGate: gate, timing: timing.timing)
            try await body(simulator, client, timing, gate)
        }
    }

    func refundHistoryError(_ client: AppStoreServerClient) async throws -> AppStoreServerAPIError {
        do {
            _ = try await client.refundHistory(transactionId: Self.transactionId, revision: nil, purpose: .incremental)
        } catch let error as AppStoreServerAPIError {
            return error
        }
        Issue.record("the call succeeded")
        throw CancellationError()
    }

    func calls(_ simulator: StoreSimulator) -> Int {
        simulator.statistics().filter { $0.endpoint == .appleRefundHistory }.map(\.granted).reduce(0, +)
    }

    /// Every token refused (a revoked key): the token signed for the call is refused, so the call is not tried again
    /// (stores.md: stop the run, do not retry); a configuration error without backoff.
    @Test func aRefusedKeyIsAConfigurationErrorWithoutRetry() async throws {
        try await withClient(.expiredAccessToken) { simulator, client, timing, gate in
            let error = try await refundHistoryError(client)
            #expect(error.code == .configuration && error.httpStatus == 401 && !error.isRetryable)
            #expect(error.message.contains("Apple refused the credentials"))
            #expect(!error.description.contains("\n"))
            #expect(timing.sleeps.isEmpty)
            #expect(gate.acquireCount == 1)
        }
    }

    /// A cached token Apple answers 401 (the simulator strikes only a token used for ten calls already): the client
    /// signs a new one and the call goes on, each exchange through the gate.
    @Test func anExpiredCachedTokenIsSignedAgainAndTheCallGoesOn() async throws {
        try await withClient(.expiredAccessToken, rate: 0.99) { simulator, client, timing, gate in
            for _ in 0..<14 {
                _ = try await client.refundHistory(
                    transactionId: Self.transactionId, revision: nil, purpose: .incremental)
            }
            #expect(calls(simulator) == 14)
            #expect(gate.acquireCount > 14, "no cached token was refused")
            #expect(timing.sleeps.isEmpty)
        }
    }

    @Test func retryableNotFoundIsRetriedWithBackoffThenStaysRetryable() async throws {
        try await withClient(.notFoundRetryable) { simulator, client, timing, gate in
            let error = try await refundHistoryError(client)
            #expect(error.httpStatus == 404 && error.isRetryable)
            #expect(error.apiErrorCode?.isRetryableNotFound == true, "\(error)")
            #expect(error.apiErrorCode?.meansTransactionNotFound == false)
            // Four attempts, each through the gate, with backoff ceilings of 0.5, 1 and 2 s between them.
            #expect(calls(simulator) == 4)
            #expect(gate.acquireCount == 4)
            #expect(timing.sleeps == [0.5, 1, 2])
        }
    }

    @Test func finalNotFoundIsReadAsTransactionNotFoundWithoutRetry() async throws {
        try await withClient(.notFoundFinal) { simulator, client, timing, _ in
            var codes: Set<Int64> = []
            for _ in 0..<2 {
                let error = try await refundHistoryError(client)
                #expect(error.httpStatus == 404 && !error.isRetryable)
                #expect(error.apiErrorCode?.meansTransactionNotFound == true, "\(error)")
                codes.insert(error.apiErrorCode?.rawValue ?? 0)
            }
            #expect(codes == [4_040_001, 4_040_005])
            #expect(calls(simulator) == 2)
            #expect(timing.sleeps.isEmpty)
        }
    }

    /// Every odd `Retry-After` form the simulator sends (non-ASCII, oversized, not a number): the client neither
    /// crashes nor waits on it; it retries on its own backoff and reports a retryable error.
    @Test func retryAfterOfAnyContentNeverCrashes() async throws {
        try await withClient(.oddRetryAfter) { simulator, client, timing, gate in
            // Four attempts a call; three calls take every one of the simulator's odd values in turn.
            for _ in 0..<3 {
                let error = try await refundHistoryError(client)
                #expect(error.httpStatus == 500 && error.isRetryable, "\(error)")
                if let wait = error.retryAfter { #expect(wait.isFinite && wait >= 0 && wait <= 30) }
            }
            #expect(calls(simulator) == 12)
            #expect(timing.sleeps.count == 9)
            #expect(timing.sleeps.allSatisfy { $0 <= 30 })
            #expect(gate.acquireCount == 12)
        }
    }
}
