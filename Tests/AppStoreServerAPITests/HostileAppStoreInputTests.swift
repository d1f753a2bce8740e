import Crypto
import Foundation
import StoreHTTP
import TestSupport
import Testing

@testable import AppStoreServerAPI

/// Property tests over hostile input: thousands of seeded mutations of valid JWS, App Store answers and Retry-After
/// values. Nothing may crash or hang; every rejection is an `AppStoreServerAPIError` with a code and a message; what
/// verifies is exactly what was signed.
@Suite struct HostileAppStoreInputTests {
    static let cases = 3000

    static func verifier() throws -> SignedPayloadVerifier {
        try SignedPayloadVerifierTests.verifier()
    }

    /// A rejection must be ours and say something.
    static func checkRejection(_ error: any Error, case index: Int) {
        guard let error = error as? AppStoreServerAPIError else {
            Issue.record("case \(index): \(type(of: error)) is not an AppStoreServerAPIError: \(error)")
            return
        }
        #expect(!error.message.isEmpty, "case \(index): \(error.code) without a message")
    }

    /// Mutated compact JWS text (any of the three parts, dots, lengths): rejected, or — when the mutation only
    /// touched a redundant base64 bit — verified with the very payload that was signed.
    @Test func mutatedJWSTextIsRejectedOrVerifiesToTheSignedPayload() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key)
        let verifier = try Self.verifier()
        let original = try await verifier.verifyTransaction(jws)
        var input = HostileInput(seed: 0x4A57)
        var rejected = 0
        for index in 0..<Self.cases {
            let text = input.mutate(jws)
            do {
                let verified = try await verifier.verifyTransaction(text)
                #expect(verified.json == original.json, "case \(index) verified another payload")
            } catch {
                rejected += 1
                Self.checkRejection(error, case: index)
            }
        }
        #expect(rejected > Self.cases * 9 / 10)
    }

    /// Mutated header and payload JSON, correctly signed by the leaf: the parser and the checks behind the signature
    /// see hostile JSON (odd x5c entries, alg values, field types, huge numbers, deep nesting).
    @Test func hostileJSONBehindAValidSignatureIsRejectedOrMeetsEveryCheck() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let header = try TestJWS.json(["alg": "ES256", "x5c": x5c])
        let payload = try TestJWS.json(TestJWS.transaction())
        let notification = try TestJWS.json([
            "notificationType": "REFUND", "notificationUUID": "n-1", "signedDate": 1_700_000_000_000,
            "data": ["bundleId": "com.example", "appAppleId": 1234, "environment": "Sandbox"],
        ])
        let verifier = try Self.verifier()
        var input = HostileInput(seed: 0x15A)
        for index in 0..<Self.cases {
            let headerBytes = input.int(0...3) == 0 ? input.mutate(Array(header)) : Array(header)
            let asNotification = input.int(0...1) == 0
            let body = Array(asNotification ? notification : payload)
            let signingInput = TestJWS.base64URL(headerBytes) + "." + TestJWS.base64URL(input.mutate(body))
            let signature = try key.signature(for: Data(signingInput.utf8))
            let jws = signingInput + "." + TestJWS.base64URL(signature.rawRepresentation)
            do {
                if asNotification {
                    let verified = try await verifier.verifyNotification(jws)
                    #expect(verified.payload.data?.bundleId == "com.example", "case \(index)")
                    #expect(verified.payload.data?.environment == .sandbox, "case \(index)")
                } else {
                    let verified = try await verifier.verifyTransaction(jws)
                    #expect(verified.payload.bundleId == "com.example", "case \(index)")
                    #expect(verified.payload.environment == .sandbox, "case \(index)")
                }
            } catch {
                Self.checkRejection(error, case: index)
            }
        }
        // Hostile headers never fill memory: the chain cache stays bounded.
        #expect(verifier.cachedChainCount <= 64)
    }

    @Test(arguments: [
        "[", "{\"a\":", "{\"x5c\":[",
    ])
    func deeplyNestedHeaderOrPayloadIsAClearError(prefix: String) async throws {
        let (x5c, key) = try TestJWS.testChain()
        let deep = Data(String(repeating: prefix, count: 100_000).utf8)
        let header = TestJWS.base64URL(try TestJWS.json(["alg": "ES256", "x5c": x5c]))
        let deepPayload = header + "." + TestJWS.base64URL(deep)
        let deepHeader = TestJWS.base64URL(deep) + "." + TestJWS.base64URL(try TestJWS.json(TestJWS.transaction()))
        let verifier = try Self.verifier()
        for input in [deepPayload, deepHeader] {
            let signature = try key.signature(for: Data(input.utf8))
            let jws = input + "." + TestJWS.base64URL(signature.rawRepresentation)
            await #expect {
                _ = try await verifier.verifyTransaction(jws)
            } throws: { error in
                let code = (error as? AppStoreServerAPIError)?.code
                return code == .invalidPayload || code == .malformedJWS
            }
        }
    }

    /// Every App Store answer model, mutated: decoded or refused as `invalidResponse` naming the request.
    @Test(arguments: [
        ("getRefundHistoryResponse", "refund"), ("getNotificationHistoryResponse", "notification"),
        ("getAllSubscriptionStatusesResponse", "status"), ("transactionHistoryResponse", "history"),
    ])
    func mutatedAnswersDecodeOrAreInvalidResponses(file: String, kind: String) throws {
        let sample = Array(try AppleReference.data("models/\(file).json"))
        var input = HostileInput(seed: UInt64(sample.count))
        for index in 0..<Self.cases {
            let response = HTTPResponse(status: 200, headers: [:], body: Data(input.mutate(sample)))
            do {
                switch kind {
                case "refund":
                    _ = try AppStoreServerClient.decode(
                        RefundHistoryResponse.self, from: response, maxBytes: 1 << 20, app: "a", request: "GET /r")
                case "notification":
                    _ = try AppStoreServerClient.decode(
                        NotificationHistoryResponse.self, from: response, maxBytes: 1 << 20, app: "a", request: "GET /r"
                    )
                case "status":
                    _ = try AppStoreServerClient.decode(
                        StatusResponse.self, from: response, maxBytes: 1 << 20, app: "a", request: "GET /r")
                default:
                    _ = try AppStoreServerClient.decode(
                        HistoryResponse.self, from: response, maxBytes: 1 << 20, app: "a", request: "GET /r")
                }
            } catch let error as AppStoreServerAPIError {
                #expect(error.code == .invalidResponse, "case \(index)")
                #expect(error.description.contains("GET /r"), "case \(index): \(error)")
            }
        }
    }

    /// Error answers with hostile bodies and Retry-After values: always an `apiError` with a status and a message
    /// (a 401 is `configuration`: refused credentials stop a job at once).
    @Test func hostileErrorAnswersAreApiErrors() throws {
        let samples = try ["apiException", "apiTooManyRequestsException", "apiUnknownError"].map {
            Array(try AppleReference.data("models/\($0).json"))
        }
        var input = HostileInput(seed: 429)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<Self.cases {
            let body = input.mutate(input.pick(samples))
            let retryAfter = input.mutate(input.pick(["5", "1.5", "1800000010", "1800000010000", "Sun, 06 Nov 1994"]))
            let status = input.pick([400, 401, 404, 429, 500, 503])
            let response = HTTPResponse(status: status, headers: ["retry-after": retryAfter], body: Data(body))
            let error = try #require(
                AppStoreServerClient.error(for: response, app: "a", request: "GET /r", now: now), "case \(index)")
            #expect(error.code == (status == 401 ? .configuration : .apiError))
            #expect(error.httpStatus == status)
            #expect(!error.message.isEmpty)
            if let wait = error.retryAfter { #expect(wait.isFinite && wait >= 0, "case \(index): \(retryAfter)") }
        }
    }

    /// Retry-After: any text gives `nil` or a finite, non-negative wait; valid delays come back as sent.
    @Test func retryAfterParsesAnyTextToNothingOrAFiniteWait() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let samples = [
            "120", "0.5", "1800000030", "1800000030000", "Wed, 21 Oct 2026 07:28:00 GMT",
            "Wednesday, 21-Oct-26 07:28:00 GMT", "Wed Oct 21 07:28:00 2026",
        ]
        var input = HostileInput(seed: 9110)
        for index in 0..<(Self.cases * 2) {
            let text = index.isMultiple(of: 3) ? input.hostileString(maxRun: 500) : input.mutate(input.pick(samples))
            if let wait = RetryAfter.seconds(from: text, now: now) {
                #expect(wait.isFinite && wait >= 0, "case \(index): \(text.debugDescription.prefix(80))")
            }
        }
        for _ in 0..<1000 {
            let delay = input.int(0...99_999_999)
            #expect(RetryAfter.seconds(from: String(delay), now: now) == Double(delay))
        }
        #expect(RetryAfter.seconds(from: String(repeating: "9", count: 400), now: now) == nil)
        #expect(RetryAfter.seconds(from: String(repeating: "9", count: 300), now: now)?.isFinite == true)
    }
}
