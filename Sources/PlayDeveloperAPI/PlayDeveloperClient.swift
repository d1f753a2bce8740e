import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// A client of the Google Play Developer API (`androidpublisher` v3) for one configured app: voided purchases and
/// subscription states, signed in as a service account.
///
/// Every call passes the ``QuotaGate`` before it is sent and reports the store's answer after; 5xx, timeouts and
/// throttled answers are retried with exponential backoff and full jitter within StoreHTTP's `RetryPolicy` bounds (the
/// policy and `Retry-After` parser the App Store client uses too); a
/// 401 drops the cached access token and retries once. Errors are ``PlayAPIError`` (or the gate's `QuotaError`).
/// See the [API reference](https://developers.google.com/android-publisher/api-ref/rest).
public struct PlayDeveloperClient: Sendable {
    /// Settings of a client.
    public struct Configuration: Sendable {
        /// The API host (default `https://androidpublisher.googleapis.com`); a path prefix is kept.
        public var baseURL: URL
        /// Overrides the key file's `token_uri`.
        public var tokenURL: URL?
        /// Seconds one request may take.
        public var requestTimeout: Double
        /// Retry bounds (StoreHTTP's policy, shared with the App Store client).
        public var retryPolicy: RetryPolicy
        /// Whether throttled answers (429, 403 `rateLimitExceeded`, not per day) are retried; the quota gate has been
        /// told, so the retry waits for its next token.
        public var retriesThrottled: Bool
        /// The share of an access token's life left at which a new one is fetched (1/12: 5 minutes of an hour).
        public var tokenRenewalShare: Double
        /// The OAuth scope the service account signs in with (the Play Developer API's; Cloud Pub/Sub's for the
        /// RTDN subscription).
        public var scope: String = ServiceAccountAuthenticator.androidPublisherScope

        /// Five attempts within two minutes, waits of up to 1, 2, 4, 8 s (full jitter), none longer than 30 s.
        public static let defaultRetryPolicy = RetryPolicy(
            maxAttempts: 5, baseDelay: 1, maxDelay: 30, maxTotalTime: 120)

        /// Google's production host.
        public static let defaultBaseURL = URL(string: "https://androidpublisher.googleapis.com")!

        /// Creates settings.
        public init(
            baseURL: URL = Self.defaultBaseURL, tokenURL: URL? = nil, requestTimeout: Double = 30,
            retryPolicy: RetryPolicy = Self.defaultRetryPolicy, retriesThrottled: Bool = true,
            tokenRenewalShare: Double = 1.0 / 12
        ) {
            self.baseURL = baseURL
            self.tokenURL = tokenURL
            self.requestTimeout = requestTimeout
            self.retryPolicy = retryPolicy
            self.retriesThrottled = retriesThrottled
            self.tokenRenewalShare = tokenRenewalShare
        }
    }

    /// The configured app id (quota and errors).
    public let app: String
    /// The settings.
    public let configuration: Configuration
    /// The sign-in and token cache.
    public let authenticator: ServiceAccountAuthenticator
    let runner: PlayCallRunner

    /// Creates a client.
    /// - Parameters:
    ///   - app: the configured app id, used for the quota gate and in errors.
    ///   - key: the service-account key (``ServiceAccountKey/load(fromFile:logger:)``).
    ///   - transport: the HTTP transport (``CurlTransport`` in production; it bounds response sizes).
    ///   - quotaGate: the shared quota.
    ///   - runtime: clock, sleep and jitter (tests inject their own).
    public init(
        app: String, key: ServiceAccountKey, configuration: Configuration = Configuration(),
        transport: any HTTPTransport, quotaGate: any QuotaGate, runtime: PlayRuntime = .live,
        logger: Logger = Logger(label: "storerecon.play")
    ) {
        self.app = app
        self.configuration = configuration
        self.authenticator = ServiceAccountAuthenticator(
            app: app, key: key, tokenURL: configuration.tokenURL, transport: transport, quotaGate: quotaGate,
            retryPolicy: configuration.retryPolicy, retriesThrottled: configuration.retriesThrottled,
            requestTimeout: configuration.requestTimeout,
            renewalShare: configuration.tokenRenewalShare, runtime: runtime, logger: logger, scope: configuration.scope)
        self.runner = PlayCallRunner(
            app: app, transport: transport, quotaGate: quotaGate, policy: configuration.retryPolicy,
            retriesThrottled: configuration.retriesThrottled, runtime: runtime, logger: logger)
    }
}
