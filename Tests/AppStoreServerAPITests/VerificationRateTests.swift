import AppStoreServerAPI
import Foundation
import Testing

/// Prints how many payloads per second are verified and decoded on a cached chain. A measurement for the benchmark's
/// notes, not an assertion: nothing here fails on speed.
@Suite struct VerificationRateTests {
    @Test func verifiedPayloadsPerSecondOnACachedChain() async throws {
        let verifier = try SignedPayloadVerifierTests.verifier()
        let (x5c, key) = try TestJWS.testChain()
        var payload =
            try JSONSerialization.jsonObject(
                with: try AppleReference.data("models/signedTransactionWithRevocation.json"))
            as? [String: Any] ?? [:]
        payload["environment"] = "Sandbox"
        payload["bundleId"] = "com.example"
        let minted = try TestJWS.make(payload: payload, x5c: x5c, key: key)
        let apple = try AppleReference.text("mock_signed_data/transactionInfo")
        let iterations = ProcessInfo.processInfo.environment["STORERECON_VERIFY_ITERATIONS"].flatMap(Int.init) ?? 500

        for (name, jws) in [("full refund transaction", minted), ("Apple transactionInfo", apple)] {
            _ = try await verifier.verifyTransaction(jws)
            let clock = ContinuousClock()
            var verified = 0
            let elapsed = try await clock.measure {
                for _ in 0..<iterations {
                    let result = try await verifier.verifyTransaction(jws)
                    if result.payload.bundleId == "com.example" { verified += 1 }
                }
            }
            #expect(verified == iterations)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("verified+decoded \(name): \(Int(Double(iterations) / seconds)) per second (\(iterations) payloads)")
        }
    }
}
