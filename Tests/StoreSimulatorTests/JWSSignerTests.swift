import Crypto
import Foundation
import Testing

@testable import StoreSimulator

/// The simulator's JWS: its signature (over a digest that starts from the header's, computed once) verifies with the
/// leaf key over `header.payload`, and the bad-signature fault's does not.
@Suite("JWS signer")
struct JWSSignerTests {
    @Test func signaturesVerifyOverHeaderAndPayloadAndTheFaultsDoNot() throws {
        let chain = try SigningChain.generate()
        let signer = JWSSigner(chain: chain)
        let payload = #"{"notificationType":"CONSUMPTION_REQUEST","signedDate":1700000000000}"#
        for (corrupt, verifies) in [(false, true), (true, false), (false, true)] {
            let parts = signer.sign(payload, corrupt: corrupt).split(separator: ".").map(String.init)
            try #require(parts.count == 3)
            #expect(Base64URL.decode(Substring(parts[1])) == Array(payload.utf8))
            let header = try #require(Base64URL.decode(Substring(parts[0])))
            let json = try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]
            #expect(json?["alg"] as? String == "ES256")
            #expect((json?["x5c"] as? [String])?.first == Data(chain.leafDER).base64EncodedString())
            let signature = try P256.Signing.ECDSASignature(
                rawRepresentation: try #require(Base64URL.decode(Substring(parts[2]))))
            let input = Data((parts[0] + "." + parts[1]).utf8)
            #expect(chain.leafKey.publicKey.isValidSignature(signature, for: input) == verifies)
        }
    }
}
