import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// Signs in as a service account and caches the access token, renewing it ahead of its expiry by a share of its
/// life (a twelfth: 5 minutes of Google's usual hour, under 2 s of a 20 s token), never before every call.
///
/// Concurrent callers share one sign-in. Each exchange passes the quota gate as ``StoreAPI/googleOAuthToken``.
/// See [Using OAuth 2.0 for server to server applications](https://developers.google.com/identity/protocols/oauth2/service-account).
public actor ServiceAccountAuthenticator {
    private let key: ServiceAccountKey
    private let tokenURL: URL
    private let runner: PlayCallRunner
    private let renewalShare: Double
    private let requestTimeout: Double
    private let scope: String
    private var cached: AccessToken?
    /// When the cached token is renewed: its life's last `renewalShare` left.
    private var renewAt = Date.distantPast
    private var waiters: [CheckedContinuation<AccessToken, any Error>]?

    /// Creates an authenticator.
    /// - Parameters:
    ///   - app: the configured app id, for the quota gate and errors.
    ///   - key: the service-account key.
    ///   - tokenURL: overrides the key file's `token_uri` (e.g. the simulator).
    ///   - renewalShare: the share of a token's life left at which a new one is fetched (0...0.5; default 1/12).
    ///   - scope: the OAuth scope (default ``androidPublisherScope``; ``storageReadOnlyScope`` for earnings reports).
    public init(
        app: String, key: ServiceAccountKey, tokenURL: URL? = nil, transport: any HTTPTransport,
        quotaGate: any QuotaGate, retryPolicy: RetryPolicy = PlayDeveloperClient.Configuration.defaultRetryPolicy,
        retriesThrottled: Bool = true, requestTimeout: Double = 30,
        renewalShare: Double = 1.0 / 12, runtime: PlayRuntime = .live,
        logger: Logger = Logger(label: "storerecon.play"),
        scope: String = ServiceAccountAuthenticator.androidPublisherScope
    ) {
        self.scope = scope
        self.key = key
        self.tokenURL = tokenURL ?? key.tokenURI
        self.runner = PlayCallRunner(
            app: app, transport: transport, quotaGate: quotaGate, policy: retryPolicy,
            retriesThrottled: retriesThrottled, runtime: runtime, logger: logger)
        self.renewalShare = min(max(0, renewalShare), 0.5)
        self.requestTimeout = requestTimeout
    }

    /// The Play Developer API's scope.
    public static let androidPublisherScope = ServiceAccountAssertion.androidPublisherScope
    /// Cloud Storage, read only: the earnings reports in the developer account's bucket.
    public static let storageReadOnlyScope = "https://www.googleapis.com/auth/devstorage.read_only"
    /// Cloud Pub/Sub's scope (pulling the RTDN subscription).
    public static let pubsubScope = "https://www.googleapis.com/auth/pubsub"

    /// A valid access token: the cached one while more than the renewal share of its life is left, else a new one.
    /// - Throws: ``PlayAPIError`` (`.invalidGrant`, `.invalidClient`, `.tokenEndpoint`, `.signing`, `.transport`,
    ///   `.serverError`, `.rateLimited`), `QuotaError` from the gate, or `CancellationError`.
    public func accessToken(purpose: CallPurpose) async throws -> AccessToken {
        while true {
            if let cached, runner.runtime.now() < renewAt { return cached }
            guard waiters != nil else { return try await signIn(purpose: purpose) }
            do {
                return try await withCheckedThrowingContinuation { continuation in
                    waiters?.append(continuation)
                }
            } catch is CancellationError where !Task.isCancelled {
                // The task that was signing in was cancelled, not this one: sign in for this one.
                continue
            }
        }
    }

    /// Signs in for every caller waiting meanwhile. A renewal that fails leaves the token in hand in use until it
    /// expires (renewal starts ahead of expiry), tried again a minute later at most.
    private func signIn(purpose: CallPurpose) async throws -> AccessToken {
        waiters = []
        let result: Result<AccessToken, any Error>
        do {
            let (token, lifetime) = try await exchange(purpose: purpose)
            result = .success(token)
            cached = token
            renewAt = token.expiresAt.addingTimeInterval(-lifetime * renewalShare)
        } catch {
            let now = runner.runtime.now()
            if let cached, now < cached.expiresAt, !(error is CancellationError) {
                runner.logger.warning(
                    "could not renew the access token; the current one is used until it expires",
                    metadata: ["app": "\(runner.app)", "expiresAt": "\(cached.expiresAt)", "error": "\(error)"])
                renewAt = min(now.addingTimeInterval(60), cached.expiresAt)
                result = .success(cached)
            } else {
                result = .failure(error)
            }
        }
        let pending = waiters ?? []
        waiters = nil
        for waiter in pending { waiter.resume(with: result) }
        return try result.get()
    }

    /// Callers waiting for the sign-in in progress (for tests).
    var waiterCount: Int { waiters?.count ?? 0 }

    /// Forgets `token` if it is the cached one (the API answered 401), so the next call signs in again.
    public func invalidate(_ token: AccessToken) {
        if cached == token { cached = nil }
    }

    /// Signs in once: the token and its life in seconds.
    private func exchange(purpose: CallPurpose) async throws -> (AccessToken, Double) {
        let label = "POST \(tokenURL.path.isEmpty ? "/" : tokenURL.path)"
        let issuedAt = runner.runtime.now()
        let response = try await runner.run(
            api: .googleOAuthToken, purpose: purpose, label: label,
            makeRequest: { try makeRequest(issuedAt: runner.runtime.now()) },
            classify: { classify($0, label: label) },
            transportError: {
                PlayAPIError(
                    PlayAPIError.Code(transport: $0.code), "\($0.code.rawValue): \($0.message)", app: runner.app,
                    request: label)
            }
        )
        struct TokenResponse: Decodable {
            var accessToken: String
            var expiresIn: Double?

            enum CodingKeys: String, CodingKey {
                case accessToken = "access_token"
                case expiresIn = "expires_in"
            }
        }
        guard let decoded = try? JSONDecoder().decode(TokenResponse.self, from: response.body),
            !decoded.accessToken.isEmpty
        else {
            throw PlayAPIError(
                .tokenEndpoint, "the token endpoint's answer holds no access_token", app: runner.app, request: label,
                httpStatus: response.status)
        }
        let lifetime = max(decoded.expiresIn ?? 3600, 0)
        runner.logger.debug(
            "signed in as service account", metadata: ["app": "\(runner.app)", "account": "\(key.clientEmail)"])
        return (AccessToken(value: decoded.accessToken, expiresAt: issuedAt.addingTimeInterval(lifetime)), lifetime)
    }

    private func makeRequest(issuedAt: Date) throws -> HTTPRequest {
        // The audience is the key file's token_uri even when the request goes elsewhere (a proxy, a private endpoint):
        // Google checks `aud` against its own token URL, as google-auth does.
        let assertion = try ServiceAccountAssertion(key: key, audience: key.tokenURI, issuedAt: issuedAt, scope: scope)
            .signed(
                with: key)
        let body =
            "grant_type=" + PlayURL.percentEncode("urn:ietf:params:oauth:grant-type:jwt-bearer")
            + "&assertion=" + PlayURL.percentEncode(assertion)
        var request = HTTPRequest(
            method: "POST", url: tokenURL,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Data(body.utf8), timeout: requestTimeout)
        // A sign-in serves every call waiting for the token, not only the one whose task asked: no call's deadline.
        request.notAfter = nil
        return request
    }

    private func classify(_ response: HTTPResponse, label: String) -> (PlayCallRunner.Verdict, QuotaFeedback) {
        if (200..<300).contains(response.status) { return (.success(response), .accepted) }
        struct OAuthError: Decodable {
            var error: String?
            var errorDescription: String?

            enum CodingKeys: String, CodingKey {
                case error
                case errorDescription = "error_description"
            }
        }
        let body = try? JSONDecoder().decode(OAuthError.self, from: response.body)
        let code = body?.error
        let detail = body?.errorDescription.map { ": " + String($0.prefix(200)) } ?? ""
        func error(_ kind: PlayAPIError.Code, _ message: String, retryAfter: Double? = nil) -> PlayAPIError {
            PlayAPIError(
                kind, message + detail, app: runner.app, request: label, httpStatus: response.status,
                googleStatus: code, retryAfter: retryAfter)
        }
        let retryAfter = response.header("retry-after").flatMap {
            RetryAfter.seconds(from: $0, now: runner.runtime.now())
        }
        if response.status == 429 {
            let failure = error(.rateLimited, "the token endpoint throttled sign-in", retryAfter: retryAfter)
            let verdict: PlayCallRunner.Verdict =
                runner.retriesThrottled ? .retry(failure, retryAfter: retryAfter) : .fail(failure)
            return (verdict, .throttled(retryAfter: retryAfter))
        }
        if response.status >= 500 {
            return (.retry(error(.serverError, "the token endpoint failed"), retryAfter: retryAfter), .accepted)
        }
        switch code {
        case "invalid_grant":
            return (
                .fail(
                    error(
                        .invalidGrant,
                        "Google refused the signed assertion for \(key.clientEmail) (key id \(key.privateKeyID)); "
                            + "check the host clock (NTP) and that the key was not deleted or revoked in Google Cloud")),
                .accepted
            )
        case "invalid_client", "unauthorized_client":
            return (
                .fail(
                    error(
                        .invalidClient,
                        "Google does not accept service account \(key.clientEmail); is it disabled or deleted?")),
                .accepted
            )
        default:
            return (.fail(error(.tokenEndpoint, "the token endpoint refused sign-in")), .accepted)
        }
    }
}
