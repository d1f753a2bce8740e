import Crypto
import Foundation
import Testing

@testable import StoreSimulator

/// A bearer token is parsed and checked once; its time checks run on every call, and a token that fails a check is
/// never remembered.
@Suite("Apple bearer memo")
struct BearerMemoTests {
    static func state() throws -> SimulatorState {
        let options = TestKeys.options(seed: 21, subscriptions: 40)
        let scenario = try ScenarioGenerator(spec: options.scenario).generate()
        return SimulatorState(options: options, scenario: scenario, keys: try #require(TestKeys.shared))
    }

    static func token(_ state: SimulatorState, _ claims: [String: Any]) throws -> String {
        let key = state.keys.appStoreKey
        var all: [String: Any] = ["iss": key.issuerId, "aud": "appstoreconnect-v1", "bid": "com.example.demo"]
        for (name, value) in claims { all[name] = value }
        let header = try TestClient.jsonText(["alg": "ES256", "typ": "JWT", "kid": key.keyId])
        let input =
            TestClient.base64URL(Data(header.utf8)) + "."
            + TestClient.base64URL(Data(try TestClient.jsonText(all).utf8))
        let signer = try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM)
        return input + "." + TestClient.base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
    }

    @Test func aTokenIsCheckedOnceAndItsTimeOnEveryCall() throws {
        let state = try Self.state()
        let verifier = AppleBearerVerifier(state: state)
        let app = try #require(state.appleApp(bundleId: "com.example.demo"))
        let now = state.clock.nowMillis() / 1000
        let token = try Self.token(state, ["exp": now + 600])
        #expect(verifier.verify(token) == app)
        #expect(verifier.verify(token) == app)
        #expect(state.appleBearers.count == 1)
        // Remembered, yet refused once it has expired (the skew is 300 s).
        state.clock.advance(millis: 901_000)
        #expect(verifier.verify(token) == nil)
        #expect(state.appleBearers.count == 1)
    }

    @Test func aTokenIssuedAheadWaitsForItsTimeAndForgedTokensAreNeverRemembered() throws {
        let state = try Self.state()
        let verifier = AppleBearerVerifier(state: state)
        let now = state.clock.nowMillis() / 1000
        let early = try Self.token(state, ["iat": now + 900, "exp": now + 1800])
        #expect(verifier.verify(early) == nil)
        state.clock.advance(millis: 600_000)
        #expect(verifier.verify(early) != nil, "its iat is now within the skew")
        let good = try Self.token(state, ["exp": now + 1200])
        var parts = good.split(separator: ".").map(String.init)
        parts[1] = TestClient.base64URL(Data(try TestClient.jsonText(["iss": "x", "exp": now + 1200]).utf8))
        let forged = parts.joined(separator: ".")
        let tooLong = try Self.token(state, ["iat": now, "exp": now + 3601])
        let before = state.appleBearers.count
        #expect(verifier.verify(forged) == nil)
        #expect(verifier.verify(tooLong) == nil)
        #expect(verifier.verify("not.a.token") == nil)
        #expect(state.appleBearers.count == before)
    }

    @Test(
        arguments: [
            ("Bearer abc.def", "abc.def"), ("bearer abc", "abc"), ("BEARER  abc ", "abc"), ("Basic abc", nil),
            ("Bearer", nil), ("Bearerx abc", nil),
        ] as [(String, String?)])
    func theBearerHeaderIsReadAsBefore(header: String, token: String?) {
        let request = StoreRequest(method: "GET", segments: [], query: [], authorization: header, body: Data())
        #expect(request.bearerToken == token)
    }
}
