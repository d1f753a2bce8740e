import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies Apple-style JWS the way Apple's libraries do, with swift-certificates, written for the tests alone:
/// three `x5c` certificates, a chain to the configured root (not to the `x5c` root), Apple's marker OIDs on the
/// intermediate and leaf, validity at the payload's `signedDate`, then the ES256 signature with the leaf key.
struct JWSVerifier {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    let root: Certificate

    init(rootDER: [UInt8]) throws {
        root = try Certificate(derEncoded: rootDER)
    }

    /// The verified payload.
    func verify(_ jws: String) async throws -> [String: Any] {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Failure("not three parts") }
        func decode(_ part: Substring) throws -> Data {
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            guard let data = Data(base64Encoded: text) else { throw Failure("bad base64url") }
            return data
        }
        guard let header = try JSONSerialization.jsonObject(with: try decode(parts[0])) as? [String: Any],
            header["alg"] as? String == "ES256", let x5c = header["x5c"] as? [String], x5c.count == 3
        else { throw Failure("header must have alg ES256 and three x5c certificates") }
        let certificates = try x5c.map { text -> Certificate in
            guard let der = Data(base64Encoded: text) else { throw Failure("bad x5c entry") }
            return try Certificate(derEncoded: Array(der))
        }
        guard let payload = try JSONSerialization.jsonObject(with: try decode(parts[1])) as? [String: Any],
            let signedDate = payload["signedDate"] as? Int64
        else { throw Failure("payload without signedDate") }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        guard intermediate.extensions[oid: [1, 2, 840, 113_635, 100, 6, 2, 1]] != nil,
            leaf.extensions[oid: [1, 2, 840, 113_635, 100, 6, 11, 1]] != nil
        else { throw Failure("missing Apple marker OIDs") }
        var verifier = Verifier(rootCertificates: CertificateStore([root])) {
            RFC5280Policy(fixedExpiryValidationTime: Date(timeIntervalSince1970: Double(signedDate) / 1000))
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate = result else { throw Failure("chain does not verify: \(result)") }
        guard let key = P256.Signing.PublicKey(leaf.publicKey),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: try decode(parts[2])),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { throw Failure("ES256 signature does not verify") }
        return payload
    }
}
