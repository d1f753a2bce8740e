import AppStoreServerAPI
import Foundation
import Logging
import RateLimiting

extension StoreClients {
    /// The App Store Server API clients and payload verifiers of an Apple app, one pair per environment to ask:
    /// the configured environment first, then sandbox when `sync.appleSandboxFallback` is on and the app is in
    /// production. Each client asks only its own environment; the caller decides when to try the next.
    /// - Throws: `ReconcilerError` (`.configuration`) naming a missing key, and `AppStoreServerAPIError`
    ///   (`privateKey`, `configuration`) for an unreadable key or root certificate (both exit 78).
    public static func apple(
        for app: AppConfig, sandboxFallback: Bool, gate: any QuotaGate, logger: Logger
    ) throws -> [(client: AppStoreServerClient, verifier: SignedPayloadVerifier)] {
        guard let keyFile = app.privateKeyFile, let keyId = app.keyId, let issuerId = app.issuerId,
            let bundleId = app.bundleId
        else {
            throw ReconcilerError(
                .configuration, "apps[\(app.id)]: privateKeyFile, keyId, issuerId and bundleId are required")
        }
        let key = try AppStoreSigningKey(privateKeyFile: keyFile, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
        let configured = environment(app.environment)
        var environments = [configured]
        if sandboxFallback && configured == .production { environments.append(.sandbox) }
        var production = AppStoreServerClient.Configuration.defaultProductionBaseURL
        var sandbox = AppStoreServerClient.Configuration.defaultSandboxBaseURL
        if let base = app.baseURL.flatMap(URL.init(string:)) { production = base }
        if let base = app.sandboxBaseURL.flatMap(URL.init(string:)) { sandbox = base }
        return try environments.map { environment in
            let configuration = AppStoreServerClient.Configuration(
                app: app.id, environment: environment, productionBaseURL: production, sandboxBaseURL: sandbox,
                sandboxFallback: false)
            let client = AppStoreServerClient(
                configuration: configuration, key: key, transport: transport, quotaGate: gate, logger: logger)
            let verifier = try SignedPayloadVerifier(
                rootCertificateFiles: app.rootCertificates, bundleId: bundleId,
                appAppleId: environment == .production ? app.appAppleId : nil, environment: environment,
                verifiesSignatures: !AppConfig.unverifiableEnvironments.contains(app.environment))
            return (client, verifier)
        }
    }

    /// Apple's spelling of a configured environment.
    static func environment(_ configured: String) -> Environment {
        switch configured {
        case "sandbox": .sandbox
        case "xcode": .xcode
        case "localtesting": .localTesting
        default: .production
        }
    }
}
