import Foundation
import Logging
import PlayDeveloperAPI
import RateLimiting
import StoreHTTP

/// Builds the store clients of a configured app, always on the job's (counting, shared) quota gate.
public enum StoreClients {
    /// One transport per process: its connections stay warm across calls and jobs.
    public static let transport = CurlTransport()

    /// The Google Play client of a Google app.
    /// - Throws: `PlayAPIError` (`.keyFile`) naming the key file when it is missing or invalid (exit 78).
    public static func play(for app: AppConfig, gate: any QuotaGate, logger: Logger) throws -> PlayDeveloperClient {
        guard let file = app.serviceAccountFile else {
            throw ReconcilerError(.configuration, "apps[\(app.id)].serviceAccountFile is not set")
        }
        let key = try ServiceAccountKey.load(fromFile: file, logger: logger)
        var configuration = PlayDeveloperClient.Configuration()
        if let base = app.baseURL.flatMap(URL.init(string:)) { configuration.baseURL = base }
        if let token = app.tokenURL.flatMap(URL.init(string:)) { configuration.tokenURL = token }
        return PlayDeveloperClient(
            app: app.id, key: key, configuration: configuration, transport: transport, quotaGate: gate, logger: logger)
    }

    /// A client of the app's Cloud Pub/Sub host signed in with the Pub/Sub scope, for pulling `rtdnSubscription`.
    public static func pubsub(for app: AppConfig, gate: any QuotaGate, logger: Logger) throws -> PlayDeveloperClient {
        guard let file = app.serviceAccountFile else {
            throw ReconcilerError(.configuration, "apps[\(app.id)].serviceAccountFile is not set")
        }
        let key = try ServiceAccountKey.load(fromFile: file, logger: logger)
        var configuration = PlayDeveloperClient.Configuration(
            baseURL: app.pubsubBaseURL.flatMap(URL.init(string:)) ?? AppConfig.defaultPubSubBaseURL)
        configuration.scope = ServiceAccountAuthenticator.pubsubScope
        if let token = app.tokenURL.flatMap(URL.init(string:)) { configuration.tokenURL = token }
        return PlayDeveloperClient(
            app: app.id, key: key, configuration: configuration, transport: transport, quotaGate: gate, logger: logger)
    }
}
