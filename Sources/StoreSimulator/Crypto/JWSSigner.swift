import Crypto
import Foundation

/// Signs Apple payloads as compact JWS (ES256) with the chain in the header's `x5c`, at request time.
struct JWSSigner: Sendable {
    private let encodedHeader: String
    private let key: P256.Signing.PrivateKey
    /// SHA-256 over `encodedHeader` and its dot: the header with its `x5c` is most of what each signature hashes.
    private let headerDigest: SHA256

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
        var digest = SHA256()
        digest.update(data: Data((encodedHeader + ".").utf8))
        headerDigest = digest
    }

    /// Signs a JSON payload.
    /// - Parameters:
    ///   - payload: the payload JSON text.
    ///   - corrupt: when true, the signature is made over different bytes, so it does not verify (a fault).
    func sign(_ payload: String, corrupt: Bool = false) -> String {
        let encodedPayload = Base64URL.encode(payload)
        var digest = headerDigest
        digest.update(data: Data((corrupt ? encodedPayload + "x" : encodedPayload).utf8))
        // ECDSA signing with a valid key cannot fail; an empty signature would only make the payload unverifiable.
        let signature = (try? key.signature(for: digest.finalize()).rawRepresentation) ?? Data()
        return encodedHeader + "." + encodedPayload + "." + Base64URL.encode(signature)
    }
}
