import Crypto
import Foundation

/// Signs Apple payloads as compact JWS (ES256) with the chain in the header's `x5c`, at request time.
struct JWSSigner: Sendable {
    private let encodedHeader: String
    private let key: P256.Signing.PrivateKey

    init(chain: SigningChain) {
        var header = JSONWriter()
        header.object { json in
            json.field("alg", "ES256")
            json.array("x5c") { list in
                for der in [chain.leafDER, chain.intermediateDER, chain.rootDER] {
                    list.string(Data(der).base64EncodedString())
                }
            }
        }
        encodedHeader = Base64URL.encode(header.text)
        key = chain.leafKey
    }

    /// Signs a JSON payload.
    /// - Parameters:
    ///   - payload: the payload JSON text.
    ///   - corrupt: when true, the signature is made over different bytes, so it does not verify (a fault).
    func sign(_ payload: String, corrupt: Bool = false) -> String {
        let input = encodedHeader + "." + Base64URL.encode(payload)
        let signed = corrupt ? input + "x" : input
        // ECDSA signing with a valid key cannot fail; an empty signature would only make the payload unverifiable.
        let signature = (try? key.signature(for: Data(signed.utf8)).rawRepresentation) ?? Data()
        return input + "." + Base64URL.encode(signature)
    }
}
