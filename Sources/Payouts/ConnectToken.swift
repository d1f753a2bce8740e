import Crypto
import Foundation

/// The ES256 bearer token of the App Store Connect API, signed with a Team API key (Finance role; not the In-App
/// Purchase key): header `alg` ES256, `kid`, `typ` JWT; claims `iss`, `iat`, `exp` (20 minutes at most), `aud`
/// `appstoreconnect-v1`.
///
/// [Generating tokens for API requests](https://developer.apple.com/documentation/appstoreconnectapi/generating-tokens-for-api-requests)
public struct ConnectToken: Sendable {
    let issuerId: String
    let keyId: String
    let key: P256.Signing.PrivateKey

    /// Loads the `.p8` key.
    /// - Throws: ``PayoutError`` (`.configuration`) naming the file when it is missing or not a P-256 PKCS#8 key;
    ///   the key is never quoted.
    public init(privateKeyFile path: String, keyId: String, issuerId: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PayoutError(.configuration, "connectPrivateKeyFile \(path): missing or not readable")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch {
            throw PayoutError(
                .configuration, "connectPrivateKeyFile \(path): not a P-256 (ES256) private key in PKCS#8 PEM")
        }
        self.keyId = keyId
        self.issuerId = issuerId
    }

    /// A token valid from `now` for `lifetime` seconds (at most 1200).
    public func token(now: Date = Date(), lifetime: Double = 1200) throws -> String {
        struct Header: Encodable {
            var alg = "ES256"
            var kid: String
            var typ = "JWT"
        }
        struct Claims: Encodable {
            var iss: String
            var iat: Int64
            var exp: Int64
            var aud = "appstoreconnect-v1"
        }
        let issued = Int64(now.timeIntervalSince1970.rounded(.down))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let header = try encoder.encode(Header(kid: keyId))
            let claims = try encoder.encode(
                Claims(iss: issuerId, iat: issued, exp: issued + Int64(min(1200, max(60, lifetime)))))
            let input = Self.base64URL(header) + "." + Self.base64URL(claims)
            let signature = try key.signature(for: Data(input.utf8))
            return input + "." + Self.base64URL(signature.rawRepresentation)
        } catch {
            throw PayoutError(.configuration, "could not sign the App Store Connect token")
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
