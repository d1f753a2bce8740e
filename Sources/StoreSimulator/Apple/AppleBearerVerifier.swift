import Synchronization

/// Checks the `Authorization: Bearer` JWT of App Store Server API calls as Apple does: ES256 with the
/// configured key (`kid`), `iss` the issuer id, `aud` `appstoreconnect-v1`, `bid` an app's bundle id, `exp`
/// at most 60 minutes ahead and, when `iat` is present, after it and at most 60 minutes after it. A token
/// without `iat` is accepted (Apple's Python library sends none).
/// https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests
struct AppleBearerVerifier {
    let state: SimulatorState

    /// What a token says that does not change with the time: its app, when it expires and when it was issued.
    struct Claims: Sendable {
        var app: Int
        var expires: Int64
        var issued: Int64?
    }

    /// The app index the token is for, or nil when it must be refused.
    func verify(_ token: String?) -> Int? {
        guard let token else { return nil }
        let claims: Claims
        if let known = state.appleBearers.claims(of: token) {
            claims = known
        } else {
            guard let checked = Self.claims(of: token, state: state) else { return nil }
            state.appleBearers.remember(checked, for: token)
            claims = checked
        }
        let now = state.authNow / 1000
        let skew = state.options.clockSkewSeconds
        guard claims.expires > now - skew, claims.expires <= now + 3600 + min(skew, 60) else { return nil }
        if let issued = claims.issued, issued > now + skew { return nil }
        return claims.app
    }

    /// The token's claims when everything but the time checks passes: the signature, the key, the issuer, the
    /// audience, a known bundle id, a numeric `exp`, and an `iat` (when present) before `exp` by at most an hour.
    static func claims(of token: String, state: SimulatorState) -> Claims? {
        guard let jwt = CompactJWT(token) else { return nil }
        let key = state.keys.appStoreKey
        guard jwt.header["alg"] as? String == "ES256", jwt.header["kid"] as? String == key.keyId,
            key.verifiesES256(jwt.signature, over: jwt.signingInput),
            jwt.string("iss") == key.issuerId, jwt.string("aud") == "appstoreconnect-v1",
            let bundleId = jwt.string("bid"), let app = state.appleApp(bundleId: bundleId),
            let expires = jwt.seconds("exp")
        else { return nil }
        guard jwt.claims["iat"] != nil else { return Claims(app: app, expires: expires, issued: nil) }
        guard let issued = jwt.seconds("iat"), issued < expires, expires - issued <= 3600 else { return nil }
        return Claims(app: app, expires: expires, issued: issued)
    }
}

/// Bearer tokens whose signature and claims were checked, with what they say: a client sends one token for up to an
/// hour of calls, so each is parsed and checked once. Only the time checks run again.
final class AppleBearerMemo: Sendable {
    /// The most tokens kept.
    static let most = 256
    private let tokens = Mutex<[String: AppleBearerVerifier.Claims]>([:])

    /// The claims of a token checked before.
    func claims(of token: String) -> AppleBearerVerifier.Claims? {
        tokens.withLock { $0[token] }
    }

    /// Remembers a token that passed every check but the time.
    func remember(_ claims: AppleBearerVerifier.Claims, for token: String) {
        tokens.withLock { tokens in
            if tokens.count >= Self.most { tokens.removeAll(keepingCapacity: true) }
            tokens[token] = claims
        }
    }

    /// How many are kept (for tests).
    var count: Int { tokens.withLock { $0.count } }
}
