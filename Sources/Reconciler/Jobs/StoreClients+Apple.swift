import AppStoreServerAPI
import Foundation
import Logging
import RateLimiting

/// An Apple app's client and its payload verifiers, one per environment the client may answer from.
public struct AppleStoreAccess: Sendable {
    /// The App Store Server API client (every call through the job's quota gate).
    public let client: AppStoreServerClient
    /// Verifiers by environment: the configured one, plus sandbox when production falls back to it.
    public let verifiers: [Environment: SignedPayloadVerifier]

    /// The verifier for payloads from `environment`.
    /// - Throws: `ReconcilerError` when the store answered from an environment this app is not set up for.
    public func verifier(for environment: Environment) throws -> SignedPayloadVerifier {
        guard let verifier = verifiers[environment] else {
            throw ReconcilerError(
                .failed, "the App Store answered from the \(environment) environment, which is not configured")
        }
        return verifier
    }
}

extension StoreClients {
    /// The Apple environment of a configured app.
    public static func appleEnvironment(_ app: AppConfig) -> Environment {
        switch app.environment {
        case "sandbox": return .sandbox
        case "xcode": return .xcode
        case "localtesting": return .localTesting
        default: return .production
        }
    }

    /// The App Store client and verifiers of an Apple app.
    /// - Throws: `AppStoreServerAPIError` naming the key or certificate file when one is missing or invalid.
    public static func apple(
        for app: AppConfig, configuration: Configuration, gate: any QuotaGate, logger: Logger
    ) throws -> AppleStoreAccess {
        guard let keyFile = app.privateKeyFile, let keyId = app.keyId, let issuerId = app.issuerId,
            let bundleId = app.bundleId
        else {
            throw ReconcilerError(.configuration, "apps[\(app.id)]: the Apple key settings are incomplete")
        }
        let key = try AppStoreSigningKey(privateKeyFile: keyFile, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
        let environment = appleEnvironment(app)
        var clientConfiguration = AppStoreServerClient.Configuration(
            app: app.id, environment: environment,
            sandboxFallback: environment == .production && configuration.sync.appleSandboxFallback)
        if let base = app.baseURL.flatMap(URL.init(string:)) { clientConfiguration.productionBaseURL = base }
        if let sandbox = app.sandboxBaseURL.flatMap(URL.init(string:)) { clientConfiguration.sandboxBaseURL = sandbox }
        if environment == .sandbox, app.baseURL != nil, app.sandboxBaseURL == nil {
            clientConfiguration.sandboxBaseURL = clientConfiguration.productionBaseURL
        }
        let client = AppStoreServerClient(
            configuration: clientConfiguration, key: key, transport: transport, quotaGate: gate, logger: logger)
        let verifyOff = AppConfig.unverifiableEnvironments.contains(app.environment) && app.rootCertificates.isEmpty
        var verifiers: [Environment: SignedPayloadVerifier] = [:]
        verifiers[environment] = try SignedPayloadVerifier(
            rootCertificateFiles: app.rootCertificates, bundleId: bundleId, appAppleId: app.appAppleId,
            environment: environment, verifiesSignatures: !verifyOff)
        if clientConfiguration.sandboxFallback {
            verifiers[.sandbox] = try SignedPayloadVerifier(
                rootCertificateFiles: app.rootCertificates, bundleId: bundleId, appAppleId: app.appAppleId,
                environment: .sandbox)
        }
        return AppleStoreAccess(client: client, verifiers: verifiers)
    }
}

// Used by the recheck job: one client per environment, tried in order by the caller.
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
