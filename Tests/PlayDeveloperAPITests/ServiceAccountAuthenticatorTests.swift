import Foundation
import Logging
import RateLimiting
import StoreHTTP
import Synchronization
import Testing

@testable import PlayDeveloperAPI

@Suite struct ServiceAccountAuthenticatorTests {
    func makeAuthenticator(
        _ transport: any HTTPTransport, gate: CountingQuotaGate = CountingQuotaGate(), time: ManualTime = ManualTime(),
        tokenURL: URL? = nil
    ) throws -> ServiceAccountAuthenticator {
        ServiceAccountAuthenticator(
            app: "acme-android", key: try TestKeys.key(), tokenURL: tokenURL, transport: transport, quotaGate: gate,
            retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 1, maxDelay: 30, maxTotalTime: 60), requestTimeout: 9,
            runtime: time.runtime,
            logger: Logger(label: "test"))
    }

    @Test func exchangesASignedAssertionByFormPost() async throws {
        let transport = RecordingTransport([.token("ya29.first")])
        let gate = CountingQuotaGate()
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, gate: gate, time: time)
        let token = try await authenticator.accessToken(purpose: .backfill)
        #expect(token.value == "ya29.first")
        #expect(token.expiresAt == time.now.addingTimeInterval(3600))

        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == TestKeys.tokenURI)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.timeout == 9)
        let body = try #require(request.body)
        let form = try #require(URLComponents(string: "?" + String(decoding: body, as: UTF8.self)))
        let fields = Dictionary(uniqueKeysWithValues: (form.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let assertion = try #require(fields["assertion"])
        #expect(assertion.split(separator: ".").count == 3)
        #expect(gate.acquires == [.init(app: "acme-android", api: .googleOAuthToken, purpose: .backfill)])
        #expect(gate.feedback(.googleOAuthToken) == [.accepted])
    }

    @Test func configuredTokenURLOverridesTheFileButTheAudienceStaysTheFilesTokenURI() async throws {
        let transport = RecordingTransport([.token()])
        let override = URL(string: "http://127.0.0.1:8089/token")!
        let authenticator = try makeAuthenticator(transport, tokenURL: override)
        _ = try await authenticator.accessToken(purpose: .incremental)
        let request = try #require(transport.requests.first)
        #expect(request.url == override)
        let body = String(decoding: try #require(request.body), as: UTF8.self)
        let assertion = try #require(body.split(separator: "=").last)
        let claims = try #require(Base64URL.decode(assertion.split(separator: ".")[1]))
        let aud = try JSONDecoder().decode(ServiceAccountAssertion.Claims.self, from: claims).aud
        // A proxy forwards the assertion to Google, which checks `aud` against its own token URL (as google-auth
        // signs it): the key file's token_uri, not the address the request went to.
        #expect(aud == (try TestKeys.key()).tokenURI.absoluteString)
        #expect(aud != override.absoluteString)
    }

    @Test func cachesUntilTheRenewalMarginThenRenews() async throws {
        let transport = RecordingTransport([.token("ya29.first"), .token("ya29.second")])
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, time: time)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.first")
        time.advance(by: 3600 - 301)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.first")
        #expect(transport.requests.count == 1)
        time.advance(by: 2)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.second")
        #expect(transport.requests.count == 2)
    }

    /// A short-lived token (20 s) is reused for most of its life, not fetched again before every call: it is renewed
    /// when a twelfth of its life is left (20 − 20/12 = 18.33 s after it was issued).
    @Test func aShortLivedTokenIsRenewedByAShareOfItsLife() async throws {
        let transport = RecordingTransport([.token("ya29.short", expiresIn: 20), .token("ya29.next", expiresIn: 20)])
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, time: time)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.short")
        time.advance(by: 18)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.short")
        #expect(transport.requests.count == 1)
        time.advance(by: 0.5)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.next")
        #expect(transport.requests.count == 2)
    }

    @Test func invalidateDropsOnlyTheCachedToken() async throws {
        let transport = RecordingTransport([.token("ya29.first"), .token("ya29.second")])
        let authenticator = try makeAuthenticator(transport)
        let first = try await authenticator.accessToken(purpose: .incremental)
        await authenticator.invalidate(AccessToken(value: "other", expiresAt: first.expiresAt))
        #expect(try await authenticator.accessToken(purpose: .incremental) == first)
        await authenticator.invalidate(first)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.second")
    }

    @Test func concurrentCallersShareOneSignIn() async throws {
        let transport = HeldTransport(reply: .token("ya29.shared"))
        let authenticator = try makeAuthenticator(transport)
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await authenticator.accessToken(purpose: .incremental).value } }
            await transport.waitForRequests(1)
            for _ in 0..<200 { await Task.yield() }
            #expect(transport.requestCount == 1)
            transport.release()
            let values = try await group.reduce(into: []) { $0.append($1) }
            #expect(values == Array(repeating: "ya29.shared", count: 8))
        }
        #expect(transport.requestCount == 1)
    }

    @Test func invalidGrantNamesClockSkewAndRevokedKeys() async throws {
        let transport = RecordingTransport([
            .json(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
        ])
        let authenticator = try makeAuthenticator(transport)
        let error = try await #require(throws: PlayAPIError.self) {
            try await authenticator.accessToken(purpose: .incremental)
        }
        #expect(error.code == .invalidGrant)
        #expect(error.googleStatus == "invalid_grant")
        #expect(error.httpStatus == 400)
        #expect(error.message.contains("clock") && error.message.contains("revoked"))
        #expect(error.message.contains("Invalid JWT Signature."))
        #expect(!error.isRetryable)
        #expect(transport.requests.count == 1)
        // Neither the assertion nor any part of it is in the text.
        let assertion = String(decoding: try #require(transport.requests[0].body), as: UTF8.self)
        let signature = try #require(assertion.split(separator: ".").last)
        #expect(!error.description.contains(signature))
    }

    @Test func invalidClient() async throws {
        let transport = RecordingTransport([
            .json(401, #"{"error":"invalid_client","error_description":"The OAuth client was not found."}"#)
        ])
        let error = try await #require(throws: PlayAPIError.self) {
            try await makeAuthenticator(transport).accessToken(purpose: .incremental)
        }
        #expect(error.code == .invalidClient && error.message.contains(TestKeys.clientEmail))
    }

    @Test func retriesTokenEndpointFailuresThenSucceeds() async throws {
        let transport = RecordingTransport([.json(503, "{}"), .timeout(), .token("ya29.late")])
        let gate = CountingQuotaGate()
        let time = ManualTime()
        let authenticator = try makeAuthenticator(transport, gate: gate, time: time)
        #expect(try await authenticator.accessToken(purpose: .incremental).value == "ya29.late")
        #expect(gate.acquires(.googleOAuthToken) == 3)
        #expect(time.sleeps == [1, 2])
        // Each attempt signs a fresh assertion.
        #expect(Set(transport.requests.compactMap(\.body)).count >= 1)
    }

    @Test func tokenAnswerWithoutAccessTokenIsAnError() async throws {
        let transport = RecordingTransport([.json(200, #"{"token_type":"Bearer"}"#)])
        let error = try await #require(throws: PlayAPIError.self) {
            try await makeAuthenticator(transport).accessToken(purpose: .incremental)
        }
        #expect(error.code == .tokenEndpoint)
    }

    @Test func failedSignInReachesEveryWaiter() async throws {
        let transport = HeldTransport(reply: .json(400, #"{"error":"invalid_grant"}"#))
        let authenticator = try makeAuthenticator(transport)
        await withTaskGroup(of: PlayAPIError.Code?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        _ = try await authenticator.accessToken(purpose: .incremental)
                        return nil
                    } catch {
                        return (error as? PlayAPIError)?.code
                    }
                }
            }
            await transport.waitForRequests(1)
            for _ in 0..<200 { await Task.yield() }
            transport.release()
            let codes = await group.reduce(into: []) { $0.append($1) }
            #expect(codes == Array(repeating: .invalidGrant, count: 4))
        }
        #expect(transport.requestCount == 1)
    }
}

/// Answers every request with one reply, but only after the test releases it; counts requests.
final class HeldTransport: HTTPTransport {
    private let reply: RecordingTransport.Reply
    private let state = Mutex<(count: Int, released: Bool, waiting: [CheckedContinuation<Void, Never>])>((0, false, []))

    init(reply: RecordingTransport.Reply) { self.reply = reply }

    var requestCount: Int { state.withLock { $0.count } }

    func waitForRequests(_ count: Int) async {
        while requestCount < count { await Task.yield() }
    }

    func release() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        await withCheckedContinuation { continuation in
            let released = state.withLock { state in
                state.count += 1
                if !state.released { state.waiting.append(continuation) }
                return state.released
            }
            if released { continuation.resume() }
        }
        switch reply {
        case .response(let response): return response
        case .failure(let error): throw error
        }
    }
}
