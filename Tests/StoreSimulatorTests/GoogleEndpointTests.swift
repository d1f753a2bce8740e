import Foundation
import Testing

@testable import StoreSimulator

@Suite("Google OAuth token endpoint and subscriptionsv2")
struct GoogleEndpointTests {
    @Test("a good assertion gets a Bearer token for an hour of simulator time")
    func tokenLifetime() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let answer = try await client.exchange(try client.googleAssertion())
            #expect(answer.status == 200)
            let json = try answer.json
            #expect(json["token_type"] as? String == "Bearer")
            #expect(json["expires_in"] as? Int == 3600)
            let token = try #require(json["access_token"] as? String)
            let url = client.voidedURL([:])
            #expect(try await client.send("GET", url, bearer: token).status == 200)
            sim.clock.advance(millis: 3_600_000)
            let expired = try await client.send("GET", url, bearer: token)
            #expect(expired.status == 401)
            #expect((try expired.json["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
            #expect(try await client.send("GET", url, bearer: "ya29.unknown").status == 401)
        }
    }

    @Test(
        "bad assertions get invalid_grant",
        arguments: ["aud", "iss", "scope", "lifetime", "future", "past", "signature", "noIat"])
    func badAssertions(_ problem: String) async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let now = sim.clock.nowMillis() / 1000
            let assertion: String
            switch problem {
            case "aud": assertion = try client.googleAssertion(["aud": "https://example.com/token"])
            case "iss": assertion = try client.googleAssertion(["iss": "someone@example.iam.gserviceaccount.com"])
            case "scope": assertion = try client.googleAssertion(["scope": "https://www.googleapis.com/auth/drive"])
            case "lifetime": assertion = try client.googleAssertion(["iat": now, "exp": now + 3601])
            case "future": assertion = try client.googleAssertion(["iat": now + 600, "exp": now + 1200])
            case "past": assertion = try client.googleAssertion(["iat": now - 4000, "exp": now - 400])
            case "signature":
                let other = try ServiceAccountKey.generate(seed: 1)
                assertion = try client.googleAssertion(signingKeyPEM: other.privateKeyPEM)
            default: assertion = try client.googleAssertion(removing: ["iat"])
            }
            let answer = try await client.exchange(assertion)
            #expect(answer.status == 400)
            #expect(try answer.json["error"] as? String == "invalid_grant")
        }
    }

    @Test("Google's own token URL as audience (what google-auth sends) is accepted")
    func googleAudience() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let assertion = try client.googleAssertion(["aud": "https://oauth2.googleapis.com/token"])
            #expect(try await client.exchange(assertion).status == 200)
        }
    }

    @Test("a scope list that includes androidpublisher and a skew of a few minutes are accepted")
    func tolerantAssertions() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let now = sim.clock.nowMillis() / 1000
            let scopes = "openid https://www.googleapis.com/auth/androidpublisher"
            let assertion = try client.googleAssertion(["scope": scopes, "iat": now + 120, "exp": now + 3720])
            #expect(try await client.exchange(assertion).status == 200)
        }
    }

    @Test("a token is good for the APIs of its scopes only: another API answers 403, cloud-platform covers all")
    func tokensAreScoped() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            func token(_ scope: String) async throws -> String {
                let answer = try await client.exchange(try client.googleAssertion(["scope": scope]))
                return try #require(try answer.json["access_token"] as? String)
            }
            let url = client.voidedURL([:])
            let storage = try await token("https://www.googleapis.com/auth/devstorage.read_only")
            let refused = try await client.send("GET", url, bearer: storage)
            #expect(refused.status == 403)
            #expect((try refused.json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED")
            let pubsub = try await token("https://www.googleapis.com/auth/pubsub")
            #expect(try await client.send("GET", url, bearer: pubsub).status == 403)
            let everything = try await token("https://www.googleapis.com/auth/cloud-platform")
            #expect(try await client.send("GET", url, bearer: everything).status == 200)
        }
    }

    @Test("subscriptionsv2 answers with the true state, RFC 3339 times and line items; unknown tokens get 404")
    func subscriptions() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(subscriptions: 600)) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            var fractionDigits: Set<Int> = []
            for truth in sim.subscriptionTruth().filter({ $0.platform == "google" }).prefix(60) {
                let answer = try await client.send("GET", client.subscriptionURL(truth.storeId), bearer: token)
                #expect(answer.status == 200)
                let json = try answer.json
                #expect(json["subscriptionState"] as? String == truth.googleState)
                #expect(json["linkedPurchaseToken"] as? String == truth.linkedPurchaseToken)
                let items = try #require(json["lineItems"] as? [[String: Any]])
                #expect(items.first?["productId"] as? String == truth.productId)
                #expect(items.first?["latestSuccessfulOrderId"] as? String == truth.latestTransaction)
                let plan = items.first?["autoRenewingPlan"] as? [String: Any]
                #expect(plan?["autoRenewEnabled"] as? Bool == truth.autoRenew)
                if let expiry = items.first?["expiryTime"] as? String {
                    let fraction = expiry.split(separator: ".").dropFirst().first.map { $0.count - 1 } ?? 0
                    fractionDigits.insert(fraction)
                    #expect(try parseMillis(expiry) == truth.expiresMillis)
                }
            }
            #expect(fractionDigits.count >= 3)
            let missing = try await client.send("GET", client.subscriptionURL("not-a-token"), bearer: token)
            #expect(missing.status == 404)
            let otherApp = try await client.send(
                "GET", client.subscriptionURL("x", package: "com.example.unknown"), bearer: token)
            #expect(otherApp.status == 404)
        }
    }

    /// RFC 3339 to milliseconds, truncating digits past the millisecond (the simulator keeps them below half a
    /// millisecond, so rounding gives the same).
    func parseMillis(_ text: String) throws -> Int64 {
        let parts = text.dropLast().split(separator: ".")
        let formatter = ISO8601DateFormatter()
        let date = try #require(formatter.date(from: String(parts[0]) + "Z"))
        let fraction =
            parts.count > 1
            ? Int64(String(parts[1].prefix(3)).padding(toLength: 3, withPad: "0", startingAt: 0)) ?? 0 : 0
        return Int64(date.timeIntervalSince1970) * 1000 + fraction
    }
}
