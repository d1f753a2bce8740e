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
        sign(utf8: Array(payload.utf8), corrupt: corrupt)
    }

    /// Signs a JSON payload given as UTF-8 bytes (as ``JSONWriter`` writes them).
    func sign(utf8 payload: [UInt8], corrupt: Bool = false) -> String {
        var encodedPayload = Base64URL.encode(payload)
        var digest = headerDigest
        // Hashed in place: a signed notification's payload is some 10 KB, and a copy into `Data` cost as much again.
        encodedPayload.withUTF8 { digest.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if corrupt { digest.update(data: Data("x".utf8)) }
        // ECDSA signing with a valid key cannot fail; an empty signature would only make the payload unverifiable.
        let signature = (try? key.signature(for: digest.finalize()).rawRepresentation) ?? Data()
        let encodedSignature = Base64URL.encode(signature)
        var jws = ""
        jws.reserveCapacity(encodedHeader.utf8.count + encodedPayload.utf8.count + encodedSignature.utf8.count + 2)
        jws += encodedHeader
        jws += "."
        jws += encodedPayload
        jws += "."
        jws += encodedSignature
        return jws
    }
}
