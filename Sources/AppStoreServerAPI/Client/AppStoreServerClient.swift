import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// A client of the App Store Server API for one app.
///
/// Every call passes the ``QuotaGate`` first (`acquire`, with the caller's ``CallPurpose``), carries a fresh ES256
/// bearer token, and reports what Apple answered (`report`: accepted, or throttled with the parsed `Retry-After`).
/// Timeouts, dropped connections, 5xx and Apple's 5000001 are retried by the configured ``RetryPolicy`` (each retry
/// acquires quota again); a 429 waits for its `Retry-After` and retries within the same bounds; other 4xx are thrown
/// at once. Transaction lookups go to production first and, when ``Configuration/sandboxFallback`` is on, to sandbox
/// after Apple's 4040010 (transaction ID not found). Tokens are never logged or put in errors.
///
/// Endpoints are in extensions: ``refundHistory(transactionId:revision:purpose:)``,
/// ``notificationHistory(_:paginationToken:purpose:)``, ``subscriptionStatuses(transactionId:status:purpose:)``
/// and ``transactionHistory(transactionId:revision:filter:purpose:)``.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi)
public struct AppStoreServerClient: Sendable {
    /// The settings.
    public let configuration: Configuration
    let tokens: BearerTokenProvider
    let transport: any HTTPTransport
    let quota: any QuotaGate
    let logger: Logger
    let timing: RetryTiming
    let now: @Sendable () -> Date

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: app, environment, base URLs, fallback, timeout, retries.
    ///   - key: the In-App Purchase key and its identifiers; its permission warning, if any, is logged once here.
    ///   - transport: how requests are sent (``CurlTransport`` in production).
    ///   - quotaGate: the limiter every call passes.
    ///   - logger: where requests and retries are logged (method and path only).
    ///   - timing: clock, sleep and random source for retries (injected in tests).
    ///   - now: the wall clock, for tokens and `Retry-After` dates (injected in tests).
    public init(
        configuration: Configuration, key: AppStoreSigningKey, transport: any HTTPTransport, quotaGate: any QuotaGate,
        logger: Logger = Logger(label: "storerecon.appstore"), timing: RetryTiming = .live,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.tokens = BearerTokenProvider(key: key, now: now)
        self.transport = transport
        self.quota = quotaGate
        self.logger = logger
        self.timing = timing
        self.now = now
        if let warning = key.permissionWarning {
            logger.warning("\(warning)", metadata: ["app": "\(configuration.app)"])
        }
    }
}
