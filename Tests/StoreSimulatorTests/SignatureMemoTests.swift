import Crypto
import Foundation
import Testing

@testable import StoreSimulator

/// The simulator checks a bearer token's signature once: the same bytes are remembered as valid, forged ones never.
@Suite("Bearer signature memo")
struct SignatureMemoTests {
    @Test("a bearer signature is verified once and remembered; a forged one is never remembered")
    func bearerSignaturesAreRemembered() throws {
        let key = AppStoreKey.generate(seed: 7)
        let signer = try P256.Signing.PrivateKey(pemRepresentation: key.privateKeyPEM)
        let input = Data("header.claims".utf8)
        let signature = Array(try signer.signature(for: input).rawRepresentation)
        #expect(key.verifiesES256(signature, over: input))
        #expect(key.verified.count == 1)
        #expect(key.verifiesES256(signature, over: input))
        #expect(key.verified.count == 1)
        // The same signature over other bytes, and a signature by another key, still fail.
        #expect(!key.verifiesES256(signature, over: Data("header.other".utf8)))
        let stranger = try P256.Signing.PrivateKey(pemRepresentation: AppStoreKey.generate(seed: 8).privateKeyPEM)
        #expect(!key.verifiesES256(Array(try stranger.signature(for: input).rawRepresentation), over: input))
        #expect(key.verified.count == 1)
        for index in 0..<SignatureMemo.most { key.verified.insert(Data("\(index)".utf8)) }
        #expect(key.verified.count <= SignatureMemo.most)
    }
}
