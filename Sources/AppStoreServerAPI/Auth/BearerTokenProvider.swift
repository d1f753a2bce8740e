import Crypto
import Foundation
import Synchronization

/// Signs the ES256 bearer JWT every App Store Server API request carries, and reuses it until the last share of its
/// life (a fifth: 60 s of the default 5 minutes, 12 s of a one-minute token).
///
/// Header `{"alg":"ES256","kid":…,"typ":"JWT"}`; claims `iss`, `iat`, `exp` (= `iat` + lifetime, 5 minutes by default,
/// at most 60), `aud` `appstoreconnect-v1`, `bid`.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests)
public final class BearerTokenProvider: Sendable {
    private struct Cached {
        var token: String
        var expires: Date
    }

    private let key: AppStoreSigningKey
    private let lifetime: Double
    private let renewalShare: Double
    private let now: @Sendable () -> Date
    private let cache = Mutex<Cached?>(nil)

    /// Creates a provider.
    /// - Parameters:
    ///   - key: the signing key and identifiers.
    ///   - lifetime: seconds from `iat` to `exp` (clamped to 60 ... 3600).
    ///   - renewalShare: a new token is signed when the cached one has less than this share of its life left
    ///     (0...0.5).
    ///   - now: the clock (injected in tests).
    public init(
        key: AppStoreSigningKey, lifetime: Double = 300, renewalShare: Double = 0.2,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.key = key
        self.lifetime = min(3600, max(60, lifetime))
        self.renewalShare = min(max(0, renewalShare), 0.5)
        self.now = now
    }

    /// A token with more than `renewalShare` of its life left.
    /// - Throws: ``AppStoreServerAPIError`` with code `tokenSigning` if signing fails.
    public func token() throws -> String {
        try issue().token
    }

    /// A token as ``token()`` gives it, and whether this call signed it (`false`: an earlier call did and it was
    /// kept).
    public func issue() throws -> (token: String, signedNow: Bool) {
        let now = now()
        return try cache.withLock { cached in
            if let cached, cached.expires.timeIntervalSince(now) > lifetime * renewalShare {
                return (cached.token, false)
            }
            let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let expires = issued.addingTimeInterval(lifetime)
            let token = try sign(issued: issued, expires: expires)
            cached = Cached(token: token, expires: expires)
            return (token, true)
        }
    }

    /// Forgets `token` if it is the cached one, so the next ``token()`` signs a new one: Apple answered it 401
    /// (a token kept across a clock step or a key rotation), and one call is tried again with a fresh token.
    public func invalidate(_ token: String) {
        cache.withLock { cached in
            if cached?.token == token { cached = nil }
        }
    }

    private struct Header: Encodable {
        var alg = "ES256"
        var kid: String
        var typ = "JWT"
    }

    private struct Claims: Encodable {
        var iss: String
        var iat: Int64
        var exp: Int64
        var aud = "appstoreconnect-v1"
        var bid: String
    }

    private func sign(issued: Date, expires: Date) throws -> String {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let header = try encoder.encode(Header(kid: key.keyId))
            let claims = try encoder.encode(
                Claims(
                    iss: key.issuerId, iat: Int64(issued.timeIntervalSince1970),
                    exp: Int64(expires.timeIntervalSince1970), bid: key.bundleId))
            let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
            let signature = try key.privateKey.signature(for: Data(signingInput.utf8))
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw AppStoreServerAPIError(code: .tokenSigning, message: "could not sign the bearer token")
        }
    }
}
