import Crypto
import Foundation
import _CryptoExtras

/// The signed JWT a service account exchanges for an access token (OAuth 2.0 JWT bearer grant, RFC 7523).
///
/// Header `{"alg":"RS256","typ":"JWT","kid":private_key_id}`; claims `iss`, `scope`, `aud`, `iat`, `exp`; signed
/// with RSA PKCS#1 v1.5 and SHA-256. The compact form is a credential: it is sent in the token request body only
/// and never logged. See [Preparing to make an authorized API call](https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests).
struct ServiceAccountAssertion: Sendable {
    /// The scope of the Play Developer API.
    static let androidPublisherScope = "https://www.googleapis.com/auth/androidpublisher"

    struct Header: Codable, Equatable {
        var alg: String
        var typ: String
        var kid: String
    }

    struct Claims: Codable, Equatable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int64
        var exp: Int64
    }

    var header: Header
    var claims: Claims

    /// Prepares the assertion for a key and token endpoint.
    /// - Parameters:
    ///   - lifetime: seconds from `iat` to `exp`; Google accepts at most 3600.
    ///   - scope: the OAuth scope asked for (default: the Play Developer API's).
    init(
        key: ServiceAccountKey, audience: URL, issuedAt: Date, lifetime: Int64 = 3600,
        scope: String = Self.androidPublisherScope
    ) {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        header = Header(alg: "RS256", typ: "JWT", kid: key.privateKeyID)
        claims = Claims(
            iss: key.clientEmail, scope: scope, aud: audience.absoluteString, iat: iat,
            exp: iat + min(lifetime, 3600))
    }

    /// The compact JWS: base64url(header) . base64url(claims) . base64url(signature).
    /// - Throws: ``PlayAPIError`` (`.signing`).
    func signed(with key: ServiceAccountKey) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let signingInput: String
        do {
            signingInput = try Base64URL.encode(encoder.encode(header)) + "." + Base64URL.encode(encoder.encode(claims))
        } catch {
            throw PlayAPIError(.signing, "cannot encode the JWT", file: key.source)
        }
        do {
            let signature = try key.privateKey.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw PlayAPIError(.signing, "RSA signing failed", file: key.source)
        }
    }
}
