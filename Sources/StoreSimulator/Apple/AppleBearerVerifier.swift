/// Checks the `Authorization: Bearer` JWT of App Store Server API calls as Apple does: ES256 with the
/// configured key (`kid`), `iss` the issuer id, `aud` `appstoreconnect-v1`, `bid` an app's bundle id, `exp`
/// at most 60 minutes ahead and, when `iat` is present, after it and at most 60 minutes after it. A token
/// without `iat` is accepted (Apple's Python library sends none).
/// https://developer.apple.com/documentation/appstoreserverapi/generating-json-web-tokens-for-api-requests
struct AppleBearerVerifier {
    let state: SimulatorState

    /// The app index the token is for, or nil when it must be refused.
    func verify(_ token: String?) -> Int? {
        guard let token, let jwt = CompactJWT(token) else { return nil }
        let key = state.keys.appStoreKey
        guard jwt.header["alg"] as? String == "ES256", jwt.header["kid"] as? String == key.keyId,
            key.verifiesES256(jwt.signature, over: jwt.signingInput),
            jwt.string("iss") == key.issuerId, jwt.string("aud") == "appstoreconnect-v1",
            let bundleId = jwt.string("bid"), let app = state.appleApp(bundleId: bundleId),
            let expires = jwt.seconds("exp")
        else { return nil }
        let now = state.authNow / 1000
        let skew = state.options.clockSkewSeconds
        guard expires > now - skew, expires <= now + 3600 + min(skew, 60) else { return nil }
        if jwt.claims["iat"] != nil {
            guard let issued = jwt.seconds("iat"), issued < expires, expires - issued <= 3600, issued <= now + skew
            else { return nil }
        }
        return app
    }
}
