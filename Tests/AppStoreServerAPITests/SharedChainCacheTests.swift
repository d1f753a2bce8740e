import Crypto
import Foundation
import StoreSimulator
import Testing

@testable import AppStoreServerAPI

/// Validated chains shared by the verifiers of one process that trust the same roots (the apps of one run), and
/// validated once when many verifications of one leaf arrive together.
@Suite struct SharedChainCacheTests {
    /// A fresh chain (its own root, so that no other test shares its cache) and a payload signed under it.
    static func chain() throws -> (root: Data, jws: (Int64) throws -> String) {
        let chain = try SigningChain.generate()
        let x5c = [chain.leafDER, chain.intermediateDER, chain.rootDER].map { Data($0).base64EncodedString() }
        return (
            Data(chain.rootDER),
            { try TestJWS.make(payload: TestJWS.transaction(signedDate: $0), x5c: x5c, key: chain.leafKey) }
        )
    }

    static func verifier(root: Data, shares: Bool) throws -> SignedPayloadVerifier {
        try SignedPayloadVerifier(
            rootCertificates: [root], bundleId: "com.example", appAppleId: 1234, environment: .sandbox,
            sharesValidatedChains: shares)
    }

    @Test func verifiersTrustingTheSameRootsShareWhatWasValidated() async throws {
        let (root, jws) = try Self.chain()
        let first = try Self.verifier(root: root, shares: true)
        let second = try Self.verifier(root: root, shares: true)
        let alone = try Self.verifier(root: root, shares: false)
        _ = try await first.verifyTransaction(try jws(1_700_000_000_000))
        #expect(second.cachedChainCount == 1, "validated by the first verifier, known to the second")
        #expect(alone.cachedChainCount == 0, "a verifier that does not share keeps its own cache")
        _ = try await second.verifyTransaction(try jws(1_700_000_000_001))
        #expect(second.cache.validationCount == 1, "the second verified without validating the chain again")

        // A verifier trusting other roots sees nothing of it, and still refuses the chain.
        let (otherRoot, _) = try Self.chain()
        let stranger = try Self.verifier(root: otherRoot, shares: true)
        #expect(stranger.cachedChainCount == 0)
        await #expect(throws: AppStoreServerAPIError.self) {
            _ = try await stranger.verifyTransaction(try jws(1_700_000_000_002))
        }
    }

    @Test func verificationsOfOneLeafArrivingTogetherValidateItOnce() async throws {
        let (root, jws) = try Self.chain()
        let verifier = try Self.verifier(root: root, shares: false)
        let payloads = try (0..<32).map { try jws(1_700_000_000_000 + Int64($0)) }
        let verified = await withTaskGroup(of: Bool.self) { group in
            for payload in payloads {
                group.addTask { (try? await verifier.verifyTransaction(payload)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 32)
        #expect(verifier.cache.validationCount == 1)
        #expect(verifier.cachedChainCount == 1)
    }
}
