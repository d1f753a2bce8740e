import Foundation
import StoreHTTP

extension AppStoreServerClient {
    /// How a client reaches the App Store Server API for one app.
    public struct Configuration: Sendable {
        /// The configured app's ID (the quota and error context; not Apple's app Apple ID).
        public var app: String
        /// Where calls go first: ``Environment/production`` or ``Environment/sandbox``.
        public var environment: Environment
        /// The production host (configurable for the simulator or a proxy).
        public var productionBaseURL: URL
        /// The sandbox host.
        public var sandboxBaseURL: URL
        /// Whether a transaction lookup that production answers with 4040010 is asked again in sandbox.
        public var sandboxFallback: Bool
        /// Whether calls to sandbox are counted in the sandbox fallback buckets (``StoreAPI/sandboxFallback``): true
        /// for a production app, whose sandbox calls Apple limits apart from its production calls.
        public var sandboxBuckets: Bool
        /// Seconds one HTTP exchange may take.
        public var requestTimeout: Double
        /// Retries of timeouts, 5xx, 5000001 and 429.
        public var retryPolicy: RetryPolicy
        /// Larger answers are refused (20 signed transactions are about 100 KB).
        public var maxResponseBytes: Int

        /// Creates a configuration.
        public init(
            app: String, environment: Environment = .production,
            productionBaseURL: URL = Self.defaultProductionBaseURL, sandboxBaseURL: URL = Self.defaultSandboxBaseURL,
            sandboxFallback: Bool = false, requestTimeout: Double = 30, retryPolicy: RetryPolicy = RetryPolicy(),
            maxResponseBytes: Int = 4 << 20, sandboxBuckets: Bool? = nil
        ) {
            self.sandboxBuckets = sandboxBuckets ?? (environment == .production)
            self.app = app
            self.environment = environment
            self.productionBaseURL = productionBaseURL
            self.sandboxBaseURL = sandboxBaseURL
            self.sandboxFallback = sandboxFallback
            self.requestTimeout = requestTimeout
            self.retryPolicy = retryPolicy
            self.maxResponseBytes = maxResponseBytes
        }

        /// `https://api.storekit.apple.com`.
        public static var defaultProductionBaseURL: URL { URL(string: "https://api.storekit.apple.com")! }
        /// `https://api.storekit-sandbox.apple.com`.
        public static var defaultSandboxBaseURL: URL { URL(string: "https://api.storekit-sandbox.apple.com")! }

        /// The base URL of an environment (sandbox for anything but production).
        public func baseURL(for environment: Environment) -> URL {
            environment == .production ? productionBaseURL : sandboxBaseURL
        }
    }
}
