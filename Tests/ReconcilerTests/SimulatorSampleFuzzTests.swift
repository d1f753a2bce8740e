import Foundation
import RateLimiting
import StoreHTTP
import StoreSimulator
import Synchronization
import TestSupport
import Testing

@testable import AppStoreServerAPI
@testable import PlayDeveloperAPI

/// Decoders never crash: seeded mutations (bit flips, cuts, non-ASCII, invalid UTF-8, long runs, deep nesting, huge
/// numbers) of REAL answers the store simulator sent over HTTP, beside the reference samples the client tests use.
/// Every input gives rows or a typed error; the one-pass Google page decoder never disagrees with JSONDecoder.
@Suite("Decoders over mutated simulator answers")
struct SimulatorSampleFuzzTests {
    static let cases = 2000

    /// What the simulator answered: bodies by kind, a signed transaction and the verifier that accepts it.
    struct Samples {
        var voidedPage: Data
        var refundPage: Data
        var notificationPage: Data
        var signedTransaction: String
        var verifier: SignedPayloadVerifier
        var retryAfter: [String]
    }

    /// Records every answer's body and `Retry-After`.
    final class Capture: HTTPTransport {
        let base = CurlTransport()
        let bodies = Mutex([String: Data]())
        let headers = Mutex([String]())

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let response = try await base.send(request)
            bodies.withLock { $0[request.url.path] = response.body }
            if let value = response.header("retry-after") { headers.withLock { $0.append(value) } }
            return response
        }

        func body(endingWith suffix: String) -> Data? {
            bodies.withLock { bodies in bodies.first { $0.key.hasSuffix(suffix) }?.value }
        }
    }

    struct OpenGate: QuotaGate {
        func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? { nil }
        func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {}
    }

    static func samples() async throws -> Samples {
        var options = SimulatorOptions(
            scenario: ScenarioSpec(
                seed: 61, subscriptions: 600, oneTimePurchases: 600, refunds: 400, historyDays: 30, futureDays: 2,
                sandboxShare: 0))
        options.authUsesWallClock = true
        options.voidedEnumEncoding = .mixed
        // One throttled answer, for a real Retry-After.
        options.quotas.appleRefundHistoryPerSecond = 1
        options.quotas.appleEnforcement = .perSecond
        return try await StoreSimulator.withRunning(options) { simulator in
            let capture = Capture()
            let truth = simulator.groundTruth()
            let now = Date(timeIntervalSince1970: Double(truth.nowMillis) / 1000)
            let google = try #require(simulator.apps.first { $0.platform == .google })
            let play = PlayDeveloperClient(
                app: google.id,
                key: try ServiceAccountKey(json: Data(simulator.serviceAccountJSON.utf8), source: "sim"),
                configuration: .init(baseURL: simulator.googleAPIBaseURL, tokenURL: simulator.googleTokenURL),
                transport: capture, quotaGate: OpenGate())
            _ = try await play.listVoidedPurchases(packageName: google.storeId, purpose: .incremental)

            let apple = try #require(simulator.apps.first { $0.platform == .apple })
            let storeKey = simulator.keys.appStoreKey
            let key = try AppStoreSigningKey(
                privateKeyPEM: storeKey.privateKeyPEM, keyId: storeKey.keyId, issuerId: storeKey.issuerId,
                bundleId: apple.storeId)
            let client = AppStoreServerClient(
                configuration: .init(
                    app: apple.id, productionBaseURL: simulator.appleProductionBaseURL,
                    sandboxBaseURL: simulator.appleSandboxBaseURL,
                    retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 5, maxTotalTime: 10)),
                key: key, transport: capture, quotaGate: OpenGate())
            let customer = try #require(truth.appleRefunds.first { $0.app == apple.id }?.originalTransactionId)
            let (refunds, _) = try await client.refundHistory(
                transactionId: customer, revision: nil, purpose: .incremental)
            _ = try? await client.refundHistory(transactionId: customer, revision: nil, purpose: .incremental)
            _ = try await client.notificationHistory(
                NotificationHistoryRequest(startDate: now.addingTimeInterval(-20 * 86_400), endDate: now),
                paginationToken: nil, purpose: .incremental)
            let verifier = try SignedPayloadVerifier(
                rootCertificates: [Data(simulator.keys.chain.rootDER)], bundleId: apple.storeId,
                appAppleId: apple.appAppleId, environment: .production)
            return Samples(
                voidedPage: try #require(capture.body(endingWith: "/voidedpurchases")),
                refundPage: try #require(capture.body(endingWith: "/refund/lookup/\(customer)")),
                notificationPage: try #require(capture.body(endingWith: "/notifications/history")),
                signedTransaction: try #require(refunds.signedTransactions.first), verifier: verifier,
                retryAfter: capture.headers.withLock { $0 })
        }
    }

    @Test func everyDecoderGivesRowsOrATypedError() async throws {
        let samples = try await Self.samples()
        var input = HostileInput(seed: 0x5A3)

        // Google voided pages: rows or a DecodingError naming the field; the fast path agrees with JSONDecoder.
        var fastPages = 0
        for index in 0..<Self.cases {
            let body = Data(input.mutate(Array(samples.voidedPage)))
            do {
                let page = try VoidedPurchasesListResponse(json: body)
                #expect(page.voidedPurchases.allSatisfy { !$0.rawJSON.isEmpty }, "case \(index)")
            } catch let error as DecodingError {
                #expect(!PlayDeveloperClient.describe(error).message.isEmpty, "case \(index)")
            }
            if let fast = VoidedPageFastDecoder.decode(body) {
                fastPages += 1
                let reference = try? VoidedPurchasesListResponse(jsonDecoding: body)
                #expect(reference == fast, "case \(index): the fast decoder disagrees with JSONDecoder")
            }
        }
        #expect(VoidedPageFastDecoder.decode(samples.voidedPage) != nil, "the simulator's page takes the fast path")
        #expect(fastPages > 0)

        // Apple pages: decoded or `invalidResponse`.
        for (sample, kind) in [(samples.refundPage, 0), (samples.notificationPage, 1)] {
            for index in 0..<Self.cases {
                let response = HTTPResponse(status: 200, headers: [:], body: Data(input.mutate(Array(sample))))
                do {
                    if kind == 0 {
                        _ = try AppStoreServerClient.decode(
                            RefundHistoryResponse.self, from: response, maxBytes: 1 << 20, app: "a", request: "GET /r")
                    } else {
                        _ = try AppStoreServerClient.decode(
                            NotificationHistoryResponse.self, from: response, maxBytes: 1 << 20, app: "a",
                            request: "POST /n")
                    }
                } catch let error as AppStoreServerAPIError {
                    #expect(error.code == .invalidResponse, "case \(index)")
                }
            }
        }

        // The simulator's signed transaction: rejected with a typed error, or verified to the very payload signed.
        let original = try await samples.verifier.verifyTransaction(samples.signedTransaction)
        for index in 0..<Self.cases {
            let text = input.mutate(samples.signedTransaction)
            do {
                let verified = try await samples.verifier.verifyTransaction(text)
                #expect(verified.json == original.json, "case \(index) verified another payload")
            } catch let error as AppStoreServerAPIError {
                #expect(!error.message.isEmpty, "case \(index)")
            }
        }
    }

    /// Retry-After values as the stores send them (the simulator's own, the three documented forms) with non-ASCII
    /// and oversized mutations: the shared parser and both clients' classifiers give nothing or a finite wait.
    @Test func headerParsersTakeAnyText() throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        var samples = [
            "120", "1795000030", "1795000030000", "Wed, 21 Oct 2026 07:28:00 GMT", "Wednesday, 21-Oct-26 07:28:00 GMT",
            "Wed Oct 21 07:28:00 2026",
        ]
        samples += ["1795000001000"]  // the simulator's Apple 429 form (UNIX milliseconds)
        let odd = ["\u{200D}", "\u{FF11}", "\u{0662}", "é", "🏳️‍🌈", "\u{202E}", "\u{FEFF}", "\0", "\u{85}"]
        var input = HostileInput(seed: 0x2A7)
        for index in 0..<Self.cases {
            var text = input.pick(samples)
            switch index % 4 {
            case 0:
                let cut = text.index(text.startIndex, offsetBy: input.int(0...text.count))
                text.insert(contentsOf: input.pick(odd), at: cut)
            case 1: text = input.mutate(text)
            case 2: text += String(repeating: input.pick(["9", " ", "GMT", "\u{200D}"]), count: input.int(1...20_000))
            default: text = input.hostileString(maxRun: 20_000)
            }
            if let wait = RetryAfter.seconds(from: text, now: now) {
                #expect(wait.isFinite && wait >= 0, "case \(index)")
            }
            let google = PlayResponseClassifier.classify(
                status: input.pick([429, 403, 503]), headers: ["retry-after": text], body: nil, now: now)
            #expect(!"\(google)".isEmpty)
            let apple = AppStoreServerClient.error(
                for: HTTPResponse(status: input.pick([429, 500]), headers: ["retry-after": text], body: Data()),
                app: "a", request: "GET /r", now: now)
            if let wait = apple?.retryAfter { #expect(wait.isFinite && wait >= 0, "case \(index)") }
            _ = LoopbackHost.contains(
                input.mutate(input.pick(["127.0.0.1", "localhost", "::1", "api.storekit.apple.com"])))
        }
    }
}
