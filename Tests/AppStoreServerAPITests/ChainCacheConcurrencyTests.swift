import AppStoreServerAPI
import Crypto
import Foundation
import StoreSimulator
import Testing

/// The validated-chain cache under many tasks at once: genuine payloads under two headers of the test chain all
/// verify, and every payload signed by another key or carrying a chain that does not reach the configured root is
/// still refused, whether its header was seen before or not.
@Suite struct ChainCacheConcurrencyTests {
    enum Kind: CaseIterable {
        case genuine, otherHeader, resigned, foreignChain
    }

    @Test func manyTasksGetTheSameVerdictsAsOne() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let stranger = try SigningChain.generate()
        let verifier = try SignedPayloadVerifierTests.verifier()
        let foreignX5c = [stranger.leafDER, stranger.intermediateDER, stranger.rootDER].map {
            Data($0).base64EncodedString()
        }
        func jws(_ kind: Kind, _ index: Int) throws -> String {
            let payload = TestJWS.transaction(signedDate: 1_700_000_000_000 + Int64(index))
            switch kind {
            case .genuine: return try TestJWS.make(payload: payload, x5c: x5c, key: key)
            case .otherHeader: return try Self.make(payload: payload, header: ["alg": "ES256", "x5c": x5c], key: key)
            case .resigned: return try TestJWS.make(payload: payload, x5c: x5c, key: stranger.leafKey)
            case .foreignChain: return try TestJWS.make(payload: payload, x5c: foreignX5c, key: stranger.leafKey)
            }
        }
        let cases = try (0..<200).map { index in
            let kind = Kind.allCases[index % Kind.allCases.count]
            return (kind, try jws(kind, index))
        }
        let verdicts = await withTaskGroup(of: (Kind, AppStoreServerAPIError.Code?).self) { group in
            for (kind, text) in cases {
                group.addTask {
                    (kind, await SignedPayloadVerifierTests.code { _ = try await verifier.verifyTransaction(text) })
                }
            }
            var verdicts: [Kind: [AppStoreServerAPIError.Code?]] = [:]
            for await (kind, code) in group { verdicts[kind, default: []].append(code) }
            return verdicts
        }
        #expect(verdicts[.genuine]?.count == 50 && verdicts[.genuine]?.allSatisfy { $0 == nil } == true)
        #expect(verdicts[.otherHeader]?.count == 50 && verdicts[.otherHeader]?.allSatisfy { $0 == nil } == true)
        #expect(verdicts[.resigned]?.count == 50 && verdicts[.resigned]?.allSatisfy { $0 == .invalidSignature } == true)
        #expect(
            verdicts[.foreignChain]?.count == 50
                && verdicts[.foreignChain]?.allSatisfy { $0 == .invalidCertificateChain } == true)
        #expect(verifier.cachedChainCount == 1)
    }

    /// Signs `payload` under a header given whole (here: keys in another order than `TestJWS` writes them).
    static func make(payload: [String: Any], header: [String: Any], key: P256.Signing.PrivateKey) throws -> String {
        let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [])
        let reordered = String(decoding: headerJSON, as: UTF8.self).replacingOccurrences(of: "{", with: "{ ")
        let input = TestJWS.base64URL(Data(reordered.utf8)) + "." + TestJWS.base64URL(try TestJWS.json(payload))
        return input + "." + TestJWS.base64URL(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }
}
