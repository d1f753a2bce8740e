import AppStoreServerAPI
import Foundation
import StoreHTTP
import Testing

/// The client over real HTTP on loopback, through ``CurlTransport`` (the store simulator will replace the tiny
/// responder in integration tests).
@Suite struct LoopbackClientTests {
    @Test func refundHistoryThrottledThenAnsweredOverHTTP() async throws {
        let page = try AppleReference.text("models/getRefundHistoryResponse.json")
        let responder = try LoopbackResponder([
            .init(status: 429, headers: ["Retry-After": "1"], body: #"{"errorCode":4290000}"#),
            .init(status: 200, headers: ["Content-Type": "application/json"], body: page),
        ])
        defer { responder.stop() }
        let key = try AppStoreSigningKey(
            privateKeyPEM: try AppleReference.text("certs/testSigningKey.p8"), keyId: "KEY", issuerId: "ISSUER",
            bundleId: "com.example")
        let gate = CountingQuotaGate()
        let timing = ManualTiming()
        let base = try #require(URL(string: "http://127.0.0.1:\(responder.port)"))
        let client = AppStoreServerClient(
            configuration: .init(app: "acme-ios", productionBaseURL: base, sandboxBaseURL: base, requestTimeout: 10),
            key: key, transport: CurlTransport(), quotaGate: gate, timing: timing.timing)

        let (result, environment) = try await client.refundHistory(
            transactionId: "2000000123", revision: "r 1", purpose: .incremental)
        #expect(result.signedTransactions == ["signed_transaction_one", "signed_transaction_two"])
        #expect(result.revision == "revision_output")
        #expect(environment == .production)
        #expect(gate.feedback == [.throttled(retryAfter: 1), .accepted])
        #expect(timing.sleeps == [1])

        let requests = responder.requests
        #expect(requests.count == 2)
        let head = try #require(requests.last)
        #expect(head.hasPrefix("GET /inApps/v2/refund/lookup/2000000123?revision=r%201 HTTP/1.1"))
        #expect(head.lowercased().contains("authorization: bearer ey"))
    }
}
