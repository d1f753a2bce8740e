import Foundation
import RateLimiting
import StoreHTTP
import Testing

@testable import PlayDeveloperAPI

extension PlayDeveloperClientTests {
    @Test func unauthorizedRenewsTheTokenOnceAndRetries() async throws {
        let harness = try ClientHarness([
            .token("ya29.stale"), try error(401, "error-401-token.json"), .token("ya29.fresh"), try page(),
        ])
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        let authorizations = harness.transport.requests.filter { !$0.isTokenRequest }.map {
            $0.headers["Authorization"]
        }
        #expect(authorizations == ["Bearer ya29.stale", "Bearer ya29.fresh"])
        #expect(harness.time.sleeps.isEmpty)
    }

    /// Two renewals at most (another call may spend a new token's life first); the third 401 is refused credentials.
    @Test func thirdUnauthorizedIsAnError() async throws {
        let harness = try ClientHarness([
            .token("ya29.a"), try error(401, "error-401-token.json"), .token("ya29.b"),
            try error(401, "error-401-token.json"), .token("ya29.c"), try error(401, "error-401-token.json"),
        ])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .unauthenticated && failure.googleStatus == "UNAUTHENTICATED")
        #expect(harness.tokenRequests == 3 && harness.apiRequests.count == 3)
    }

    @Test func tokenIsRenewedBeforeItExpires() async throws {
        let harness = try ClientHarness([
            .token("ya29.one", expiresIn: 3600), try page(), .token("ya29.two"), try page(),
        ])
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        harness.time.advance(by: 3400)
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(harness.transport.requests.last?.headers["Authorization"] == "Bearer ya29.two")
        #expect(harness.tokenRequests == 2)
    }

    @Test func permissionDeniedNamesTheMissingPermission() async throws {
        let harness = try ClientHarness([.token(), try error(401, "error-401-permission.json")])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .permissionDenied)
        #expect(failure.message.contains("'View financial data'"))
        #expect(failure.reasons == ["permissionDenied"])
        #expect(harness.tokenRequests == 1 && harness.apiRequests.count == 1)
    }
}
