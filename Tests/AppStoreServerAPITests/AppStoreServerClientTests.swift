import AppStoreServerAPI
import Crypto
import Foundation
import RateLimiting
import StoreHTTP
import Testing

@Suite struct AppStoreServerClientTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let refundPage = #"{"signedTransactions":["a.b.c"],"revision":"rev-2","hasMore":true}"#

    struct Harness {
        let client: AppStoreServerClient
        let transport: RecordingTransport
        let gate: CountingQuotaGate
        let timing: ManualTiming
    }

    static func harness(
        _ answers: [RecordingTransport.Answer], environment: Environment = .production, fallback: Bool = false,
        retry: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: 1, maxDelay: 30, maxTotalTime: 120),
        gate: CountingQuotaGate = CountingQuotaGate()
    ) throws -> Harness {
        let key = try AppStoreSigningKey(
            privateKeyPEM: try AppleReference.text("certs/testSigningKey.p8"), keyId: "KEY", issuerId: "ISSUER",
            bundleId: "com.example")
        let transport = RecordingTransport(answers)
        let timing = ManualTiming(fraction: 0.5)
        let configuration = AppStoreServerClient.Configuration(
            app: "acme-ios", environment: environment,
            productionBaseURL: URL(string: "https://prod.test/")!, sandboxBaseURL: URL(string: "https://sandbox.test")!,
            sandboxFallback: fallback, requestTimeout: 7, retryPolicy: retry)
        let client = AppStoreServerClient(
            configuration: configuration, key: key, transport: transport, quotaGate: gate, timing: timing.timing,
            now: { now })
        return Harness(client: client, transport: transport, gate: gate, timing: timing)
    }

    static func apiError(_ body: () async throws -> Void) async -> AppStoreServerAPIError? {
        do {
            try await body()
            return nil
        } catch let error as AppStoreServerAPIError {
            return error
        } catch {
            return nil
        }
    }

    @Test func refundHistoryRequestQuotaAndToken() async throws {
        let h = try Self.harness([RecordingTransport.json(200, Self.refundPage)])
        let (page, environment) = try await h.client.refundHistory(
            transactionId: "2000000123", revision: "rev+1/=", purpose: .backfill)
        #expect(page.revision == "rev-2")
        #expect(page.hasMore)
        #expect(environment == .production)

        let request = try #require(h.transport.requests.first)
        #expect(request.method == "GET")
        #expect(
            request.url.absoluteString == "https://prod.test/inApps/v2/refund/lookup/2000000123?revision=rev%2B1%2F%3D")
        #expect(request.timeout == 7)
        let authorization = try #require(request.headers["Authorization"])
        #expect(authorization.hasPrefix("Bearer "))
        let token = String(authorization.dropFirst("Bearer ".count))
        let parts = token.split(separator: ".")
        let key = try P256.Signing.PrivateKey(pemRepresentation: try AppleReference.text("certs/testSigningKey.p8"))
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try #require(Base64URLTestDecoder.decode(String(parts[2]))))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))

        #expect(h.gate.acquireCount == 1)
        #expect(h.gate.apis == [.appleRefundHistory])
        #expect(h.gate.state.withLock { $0.acquired.first?.purpose } == .backfill)
        #expect(h.gate.feedback == [.accepted])
    }

    /// A grant the transport gets too late is not used: the gate is asked again, twice at most, then the call goes
    /// whatever its time (``QuotaGate/sendGranted(app:api:purpose:onLate:_:)``, shared by every store client).
    @Test(arguments: [(1, 2, 1), (5, 3, 2)])
    func aGrantThatReachesTheTransportLateIsAskedForAgain(late: Int, grants: Int, unsent: Int) async throws {
        let h = try Self.harness(
            [RecordingTransport.json(200, Self.refundPage)], gate: CountingQuotaGate(lateGrants: late))
        let (page, _) = try await h.client.refundHistory(transactionId: "2000000123", revision: nil, purpose: .backfill)
        #expect(page.revision == "rev-2")
        #expect(h.gate.acquireCount == grants)
        #expect(h.transport.lateRequests == unsent)
        #expect(h.transport.requests.count == 1)
        #expect(h.gate.feedback.count == 1)
    }

    @Test func firstPageSendsNoRevision() async throws {
        let h = try Self.harness([RecordingTransport.json(200, Self.refundPage)])
        _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
        #expect(h.transport.requests.first?.url.absoluteString == "https://prod.test/inApps/v2/refund/lookup/1")
    }

    @Test func serverErrorsAreRetriedAndEachRetryAcquiresQuota() async throws {
        let h = try Self.harness([
            RecordingTransport.json(500, #"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#),
            RecordingTransport.json(400, #"{"errorCode":5000001,"errorMessage":"retry"}"#),
            RecordingTransport.json(200, Self.refundPage),
        ])
        let (page, _) = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
        #expect(page.revision == "rev-2")
        #expect(h.transport.requests.count == 3)
        #expect(h.gate.acquireCount == 3)
        #expect(h.gate.feedback == [.accepted, .accepted, .accepted])
        #expect(h.timing.sleeps == [0.5, 1])
    }

    @Test func retriesAreBoundedAndTheErrorSaysRetryable() async throws {
        let h = try Self.harness([RecordingTransport.json(503, "")])
        let error = try #require(
            await Self.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.isRetryable)
        #expect(error.httpStatus == 503)
        #expect(error.app == "acme-ios")
        #expect(h.transport.requests.count == 3)
    }

    @Test func throttlingReportsRetryAfterAndWaitsForIt() async throws {
        let retryAt = Self.now.addingTimeInterval(12).timeIntervalSince1970 * 1000
        let h = try Self.harness([
            RecordingTransport.json(
                429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#,
                headers: ["retry-after": String(Int64(retryAt))]),
            RecordingTransport.json(200, Self.refundPage),
        ])
        _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
        #expect(h.gate.feedback == [.throttled(retryAfter: 12), .accepted])
        #expect(h.timing.sleeps == [12])
        #expect(h.gate.acquireCount == 2)
    }

    @Test func throttlingWithATooLongRetryAfterGivesUpAtOnce() async throws {
        let h = try Self.harness([
            RecordingTransport.json(429, "", headers: ["retry-after": "3600"])
        ])
        let error = try #require(
            await Self.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.isRetryable)
        #expect(error.retryAfter == 3600)
        #expect(h.transport.requests.count == 1)
        #expect(h.gate.feedback == [.throttled(retryAfter: 3600)])
    }

    @Test func clientErrorsAreNotRetriedAndKeepAppleCodes() async throws {
        for (body, code) in [
            (#"{"errorCode":4000006,"errorMessage":"Invalid transaction id."}"#, APIErrorCode.invalidTransactionId),
            (#"{"errorCode":9990000,"errorMessage":"Testing error."}"#, APIErrorCode(rawValue: 9_990_000)),
        ] {
            let h = try Self.harness([RecordingTransport.json(400, body)])
            let error = try #require(
                await Self.apiError {
                    _ = try await h.client.refundHistory(transactionId: "x", revision: nil, purpose: .incremental)
                })
            #expect(error.apiErrorCode == code)
            #expect(error.httpStatus == 400)
            #expect(!error.isRetryable)
            #expect(error.request == "GET /inApps/v2/refund/lookup/x")
            #expect(h.transport.requests.count == 1)
            #expect(h.timing.sleeps.isEmpty)
        }
    }

    @Test func notFoundInProductionFallsBackToSandboxWhenEnabled() async throws {
        let notFound = RecordingTransport.json(
            404, #"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#)
        let h = try Self.harness([notFound, RecordingTransport.json(200, Self.refundPage)], fallback: true)
        let (_, environment) = try await h.client.refundHistory(
            transactionId: "1", revision: nil, purpose: .incremental)
        #expect(environment == .sandbox)
        #expect(h.transport.requests.map(\.url.host) == ["prod.test", "sandbox.test"])
        #expect(h.gate.acquireCount == 2)
        // Sandbox has its own limits (10 % of production's): the second call is counted in its own bucket.
        #expect(h.gate.apis == [.appleRefundHistory, .appleRefundHistory.sandboxFallback])

        let off = try Self.harness([notFound, RecordingTransport.json(200, Self.refundPage)], fallback: false)
        let error = try #require(
            await Self.apiError {
                _ = try await off.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.apiErrorCode == .transactionIdNotFound)
        #expect(off.transport.requests.count == 1)
    }

    @Test func sandboxConfigurationCallsSandboxOnly() async throws {
        let h = try Self.harness([RecordingTransport.json(200, Self.refundPage)], environment: .sandbox, fallback: true)
        let (_, environment) = try await h.client.refundHistory(
            transactionId: "1", revision: nil, purpose: .incremental)
        #expect(environment == .sandbox)
        #expect(h.transport.requests.map(\.url.host) == ["sandbox.test"])
        #expect(h.gate.apis == [.appleRefundHistory], "a sandbox app's limits are its own (scaled in its policy)")
    }

    @Test func transportTimeoutsAreRetried() async throws {
        let timeout = TransportError(code: .timeout, request: "GET /x", message: "timed out")
        let h = try Self.harness([.failure(timeout), RecordingTransport.json(200, Self.refundPage)])
        _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
        #expect(h.transport.requests.count == 2)
        #expect(h.gate.acquireCount == 2)

        let failing = try Self.harness([.failure(timeout)])
        let error = try #require(
            await Self.apiError {
                _ = try await failing.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.code == .transport)
        #expect(error.isRetryable)
        #expect(failing.transport.requests.count == 3)
    }

    @Test func quotaRefusalStopsBeforeAnyCall() async throws {
        let refusal = QuotaError(app: "acme-ios", api: .appleRefundHistory, reason: "backfill share spent")
        let h = try Self.harness(
            [RecordingTransport.json(200, Self.refundPage)], gate: CountingQuotaGate(refuse: refusal))
        await #expect(throws: QuotaError.self) {
            _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .backfill)
        }
        #expect(h.transport.requests.isEmpty)
    }

    @Test func errorsNeverHoldTheToken() async throws {
        let h = try Self.harness([RecordingTransport.json(401, "")])
        let error = try #require(
            await Self.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: "secret-rev", purpose: .incremental)
            })
        let authorization = try #require(h.transport.requests.first?.headers["Authorization"])
        let token = String(authorization.dropFirst("Bearer ".count))
        #expect(!error.description.contains(token))
        #expect(!error.description.contains("eyJ"))
        #expect(!error.description.contains("secret-rev"))
        #expect(error.httpStatus == 401)
        #expect(!error.isRetryable)
    }

    @Test func malformedSuccessIsAnInvalidResponse() async throws {
        let h = try Self.harness([RecordingTransport.json(200, "<html>")])
        let error = try #require(
            await Self.apiError {
                _ = try await h.client.refundHistory(transactionId: "1", revision: nil, purpose: .incremental)
            })
        #expect(error.code == .invalidResponse)
        #expect(!error.isRetryable)
    }
}
