import Foundation

/// `POST /token`: Google's OAuth 2.0 token endpoint for the JWT-bearer grant. It checks the assertion as Google
/// does (RS256 signature by the service account's key, `iss`, `aud`, `scope`, `iat`/`exp`) and issues an
/// access token that expires on the simulator clock.
/// https://developers.google.com/identity/protocols/oauth2/service-account#httprest
struct GoogleTokenEndpoint {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let scope = "https://www.googleapis.com/auth/androidpublisher"
    /// Cloud Storage read-only: the earnings reports.
    static let storageScope = "https://www.googleapis.com/auth/devstorage.read_only"
    /// Cloud Pub/Sub's scope.
    static let pubsubScope = "https://www.googleapis.com/auth/pubsub"
    /// Every Google Cloud API's scope.
    static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

    /// Audiences Google's token endpoint accepts besides its own URL: google-auth (Python) always signs for
    /// `https://oauth2.googleapis.com/token`, whatever the key file's `token_uri` says.
    static let googleAudiences: Set<String> = [
        "https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token",
        "https://accounts.google.com/o/oauth2/token",
    ]

    let state: SimulatorState

    func handle(_ request: StoreRequest, faults: Set<FaultKind>) -> StoreReply {
        guard request.method == "POST" else {
            return GoogleError.oauth("invalid_request", "Only POST is supported.", status: 405)
        }
        let form = StoreRequest.parseQuery(String(decoding: request.body, as: UTF8.self), plusIsSpace: true)
        func value(_ name: String) -> String? { form.first { $0.name == name }?.value }
        guard value("grant_type") == Self.grantType else {
            return GoogleError.oauth("unsupported_grant_type", "Invalid grant_type: \(value("grant_type") ?? "")")
        }
        guard let assertion = value("assertion"), let jwt = CompactJWT(assertion) else {
            return GoogleError.oauth("invalid_request", "Invalid assertion format.")
        }
        if let problem = check(jwt, proxied: faults.contains(.proxiedTokenAudience)) {
            return GoogleError.oauth("invalid_grant", problem)
        }
        let scopes = Set((jwt.string("scope") ?? "").split(separator: " ").map(String.init))
        let (token, expiresIn) = state.issueAccessToken(scopes: scopes)
        return .json { json in
            json.object { object in
                object.field("access_token", token)
                if faults.contains(.wrongFieldTypes) {
                    object.field("expires_in", "an hour")
                } else {
                    object.field("expires_in", expiresIn)
                }
                object.field("token_type", "Bearer")
            }
        }
    }

    /// What is wrong with an assertion, or nil.
    /// - Parameter proxied: the endpoint stands behind a proxy for Google: only Google's own URLs are audiences.
    private func check(_ jwt: CompactJWT, proxied: Bool = false) -> String? {
        let account = state.keys.serviceAccount
        guard jwt.header["alg"] as? String == "RS256" else { return "Invalid JWT: unsupported algorithm." }
        if let kid = jwt.header["kid"] as? String, kid != account.privateKeyId {
            return "Invalid JWT Signature."
        }
        guard account.verifiesRS256(jwt.signature, over: jwt.signingInput) else { return "Invalid JWT Signature." }
        guard jwt.string("iss") == account.clientEmail else { return "Invalid issuer: unknown service account." }
        guard let audience = jwt.string("aud"),
            (audience == state.tokenURL && !proxied) || Self.googleAudiences.contains(audience)
        else {
            return "Invalid JWT: Audience must be \(proxied ? "https://oauth2.googleapis.com/token" : state.tokenURL)."
        }
        let scopes = (jwt.string("scope") ?? "").split(separator: " ")
        guard
            scopes.contains(Substring(Self.scope)) || scopes.contains(Substring(Self.storageScope))
                || scopes.contains(Substring(Self.pubsubScope)) || scopes.contains(Substring(Self.cloudPlatformScope))
        else {
            return "Invalid OAuth scope or ID token audience provided."
        }
        guard let issued = jwt.seconds("iat"), let expires = jwt.seconds("exp") else {
            return "Invalid JWT: iat and exp are required."
        }
        let now = state.authNow / 1000
        let skew = state.options.clockSkewSeconds
        guard expires > issued, expires - issued <= 3600 else {
            return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
        }
        guard issued <= now + skew, expires >= now - skew else {
            return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                + "Check your iat and exp values in the JWT claim."
        }
        return nil
    }
}
