import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// A client of the Google Play Developer API (`androidpublisher` v3) for one configured app: voided purchases and
/// subscription states, signed in as a service account.
///
/// Every call passes the ``QuotaGate`` before it is sent and reports the store's answer after; 5xx, timeouts and
/// throttled answers are retried with exponential backoff and full jitter within ``PlayRetryPolicy``'s bounds; a
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
        /// Retry bounds.
        public var retryPolicy: PlayRetryPolicy
        /// Seconds before an access token's expiry at which a new one is fetched.
        public var tokenRenewalMargin: Double

        /// Google's production host.
        public static let defaultBaseURL = URL(string: "https://androidpublisher.googleapis.com")!

        /// Creates settings.
        public init(
            baseURL: URL = Self.defaultBaseURL, tokenURL: URL? = nil, requestTimeout: Double = 30,
            retryPolicy: PlayRetryPolicy = PlayRetryPolicy(), tokenRenewalMargin: Double = 300
        ) {
            self.baseURL = baseURL
            self.tokenURL = tokenURL
            self.requestTimeout = requestTimeout
            self.retryPolicy = retryPolicy
            self.tokenRenewalMargin = tokenRenewalMargin
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
    ///   - transport: the HTTP transport (``URLSessionTransport`` in production; it bounds response sizes).
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
            retryPolicy: configuration.retryPolicy, requestTimeout: configuration.requestTimeout,
            renewalMargin: configuration.tokenRenewalMargin, runtime: runtime, logger: logger)
        self.runner = PlayCallRunner(
            app: app, transport: transport, quotaGate: quotaGate, policy: configuration.retryPolicy, runtime: runtime,
            logger: logger)
    }
}
