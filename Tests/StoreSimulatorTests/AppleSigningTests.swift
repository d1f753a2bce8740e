import Foundation
import Testing

@testable import StoreSimulator

@Suite("Apple signed payloads and bearer tokens")
struct AppleSigningTests {
    /// A production customer with a visible refund.
    func refundedCustomer(_ sim: StoreSimulator) throws -> GroundTruth.AppleRefund {
        try #require(sim.groundTruth().appleRefunds.first { $0.environment == "Production" })
    }

    @Test("refund history payloads verify against the root storesim init writes, and not when tampered with")
    func signaturesVerify() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storesim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await StoreSimulator.withRunning(TestKeys.options(refunds: 200)) { sim in
            try SimulatorDirectory(path: directory.path).write(
                spec: sim.spec, keys: sim.keys, settings: .init(port: sim.baseURL.port ?? 0))
            let rootDER = try Data(contentsOf: directory.appendingPathComponent("SimulatorRootCA.der"))
            let verifier = try JWSVerifier(rootDER: Array(rootDER))
            let client = TestClient(sim)
            let refund = try refundedCustomer(sim)
            let answer = try await client.send(
                "GET", client.appleURL("inApps/v2/refund/lookup/\(refund.originalTransactionId)"),
                bearer: try client.appleBearer())
            #expect(answer.status == 200)
            let signed = try #require(try answer.json["signedTransactions"] as? [String])
            let payloads = try await signed.asyncMap { try await verifier.verify($0) }
            let match = try #require(payloads.first { $0["transactionId"] as? String == refund.transactionId })
            #expect(match["revocationDate"] as? Int64 == refund.revocationDate)
            #expect(match["revocationType"] as? String == refund.revocationType)
            #expect(match["price"] as? Int64 == refund.priceMilli)
            #expect(match["currency"] as? String == refund.currency)
            #expect(match["bundleId"] as? String == "com.example.demo")
            #expect(match["environment"] as? String == "Production")
            // Change one payload character: the signature must fail.
            let parts = signed[0].split(separator: ".").map(String.init)
            var payload = Array(parts[1])
            payload[5] = payload[5] == "A" ? "B" : "A"
            let tampered = parts[0] + "." + String(payload) + "." + parts[2]
            await #expect(throws: (any Error).self) { try await verifier.verify(tampered) }
            // Another root must not be trusted.
            let stranger = try JWSVerifier(rootDER: try SigningChain.generate().rootDER)
            await #expect(throws: (any Error).self) { try await stranger.verify(signed[0]) }
        }
    }

    @Test(
        "bearer tokens are refused for a wrong aud, bid, issuer, key id, signature, or exp too far ahead",
        arguments: ["aud", "bid", "iss", "kid", "signature", "expTooFar", "expired", "iatAfterExp", "lifetime"])
    func bearerRejections(_ problem: String) async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let now = sim.clock.nowMillis() / 1000
            let bearer: String
            switch problem {
            case "aud": bearer = try client.appleBearer(["aud": "appstoreconnect-v2"])
            case "bid": bearer = try client.appleBearer(["bid": "com.example.other"])
            case "iss": bearer = try client.appleBearer(["iss": "00000000-0000-0000-0000-000000000000"])
            case "kid": bearer = try client.appleBearer(keyId: "WRONGKEY01")
            case "signature":
                bearer = try client.appleBearer(signingKeyPEM: AppStoreKey.generate(seed: 5).privateKeyPEM)
            case "expTooFar": bearer = try client.appleBearer(["exp": now + 3700])
            case "expired": bearer = try client.appleBearer(["exp": now - 600])
            case "iatAfterExp": bearer = try client.appleBearer(["iat": now + 100, "exp": now + 50])
            default: bearer = try client.appleBearer(["iat": now - 3000, "exp": now + 900])
            }
            let answer = try await client.send(
                "GET", client.appleURL("inApps/v1/subscriptions/2000000000000000"), bearer: bearer)
            #expect(answer.status == 401)
        }
    }

    @Test("a bearer token without iat (as Apple's Python library sends) is accepted, as is one with iat")
    func bearerWithoutIat() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let refund = try refundedCustomer(sim)
            let url = client.appleURL("inApps/v2/refund/lookup/\(refund.transactionId)")
            let now = sim.clock.nowMillis() / 1000
            #expect(
                try await client.send("GET", url, bearer: try client.appleBearer(["exp": now + 3600])).status == 200)
            let withIat = try client.appleBearer(["iat": now, "exp": now + 300])
            #expect(try await client.send("GET", url, bearer: withIat).status == 200)
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
