import Foundation

/// A compact JWT or JWS taken apart: header and claims as JSON objects, the signing input and the signature.
/// Nothing is trusted until a verifier checks the signature.
struct CompactJWT {
    let header: [String: Any]
    let claims: [String: Any]
    let signingInput: Data
    let signature: [UInt8]

    /// Parses `header.payload.signature`; nil when it is not three base64url parts holding JSON objects.
    init?(_ token: some StringProtocol) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(Substring(parts[0])),
            let claimBytes = Base64URL.decode(Substring(parts[1])),
            let signature = Base64URL.decode(Substring(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Data((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    /// A string claim.
    func string(_ name: String) -> String? {
        claims[name] as? String
    }

    /// A numeric claim (seconds), nil when absent or not a number.
    func seconds(_ name: String) -> Int64? {
        guard let number = claims[name] as? NSNumber, !(claims[name] is Bool) else { return nil }
        return Int64(number.doubleValue.rounded(.down))
    }
}
