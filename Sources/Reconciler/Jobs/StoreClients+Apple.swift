import AppStoreServerAPI
import Foundation
import Logging
import RateLimiting

/// An Apple app's client and its payload verifiers, one per environment the client may answer from.
public struct AppleStoreAccess: Sendable {
    /// The App Store Server API client (every call through the job's quota gate).
    public let client: AppStoreServerClient
    /// Verifiers by environment: the client's own, plus sandbox when the client falls back to it.
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

/// Where the callers of ``StoreClients/apple(for:rules:gate:logger:)`` differ; the rest comes from the app's
/// configuration.
public struct AppleClientRules: Sendable, Equatable {
    /// How a production app reaches sandbox when `sync.appleSandboxFallback` is on.
    public enum SandboxFallback: Sendable, Equatable {
        /// Production only.
        case off
        /// The one client asks sandbox again when production does not know a transaction (4040010).
        case sameClient
        /// A second client asks sandbox; the caller decides when.
        case ownClient
    }

    /// How a production app reaches sandbox.
    public var sandboxFallback: SandboxFallback
    /// Whether a sandbox app with `baseURL` and no `sandboxBaseURL` sends its calls to `baseURL`.
    public var sandboxUsesBaseURL: Bool
    /// Whether Xcode and local-testing payloads skip signature checks even when root certificates are configured.
    public var skipsSignaturesDespiteRoots: Bool
    /// Whether verifiers outside production hold the app Apple ID (only production notifications are checked
    /// against it).
    public var appAppleIdOutsideProduction: Bool

    /// The refund sync, refund requests and quarantine retry: one client that falls back itself, sandbox at
    /// `baseURL` when only that is set, signatures checked whenever roots are configured.
    public static func refunds(sandboxFallback: Bool) -> AppleClientRules {
        AppleClientRules(
            sandboxFallback: sandboxFallback ? .sameClient : .off, sandboxUsesBaseURL: true,
            skipsSignaturesDespiteRoots: false, appAppleIdOutsideProduction: true)
    }

    /// The expiry recheck: one client per environment, asked in turn by the caller; sandbox at `sandboxBaseURL` or
    /// Apple's sandbox host; Xcode and local-testing payloads never checked.
    public static func recheck(sandboxFallback: Bool) -> AppleClientRules {
        AppleClientRules(
            sandboxFallback: sandboxFallback ? .ownClient : .off, sandboxUsesBaseURL: false,
            skipsSignaturesDespiteRoots: true, appAppleIdOutsideProduction: false)
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

    /// The App Store client and verifiers of an Apple app, for the refund sync, refund requests and quarantine retry.
    /// - Throws: `ReconcilerError` (`.configuration`) naming a missing key setting, and `AppStoreServerAPIError`
    ///   naming the key or certificate file when one is missing or invalid.
    public static func apple(
        for app: AppConfig, configuration: Configuration, gate: any QuotaGate, logger: Logger
    ) throws -> AppleStoreAccess {
        let rules = AppleClientRules.refunds(sandboxFallback: configuration.sync.appleSandboxFallback)
        return try apple(for: app, rules: rules, gate: gate, logger: logger)[0]
    }

    /// The App Store Server API clients and payload verifiers of an Apple app for the recheck, one pair per
    /// environment to ask: the configured environment first, then sandbox when `sandboxFallback` is on and the app is
    /// in production. Each client asks only its own environment; the caller decides when to try the next.
    /// - Throws: `ReconcilerError` (`.configuration`) naming a missing key, and `AppStoreServerAPIError`
    ///   (`privateKey`, `configuration`) for an unreadable key or root certificate (both exit 78).
    public static func apple(
        for app: AppConfig, sandboxFallback: Bool, gate: any QuotaGate, logger: Logger
    ) throws -> [(client: AppStoreServerClient, verifier: SignedPayloadVerifier)] {
        try apple(for: app, rules: .recheck(sandboxFallback: sandboxFallback), gate: gate, logger: logger).map {
            ($0.client, try $0.verifier(for: $0.client.configuration.environment))
        }
    }

    /// The one place an Apple app's clients and verifiers are made: one access per client, the configured
    /// environment's first.
    /// - Throws: `ReconcilerError` (`.configuration`) naming a missing key setting, and `AppStoreServerAPIError`
    ///   (`privateKey`, `configuration`) for an unreadable key or root certificate (both exit 78).
    public static func apple(
        for app: AppConfig, rules: AppleClientRules, gate: any QuotaGate, logger: Logger
    ) throws -> [AppleStoreAccess] {
        guard let keyFile = app.privateKeyFile, let keyId = app.keyId, let issuerId = app.issuerId,
            let bundleId = app.bundleId
        else {
            throw ReconcilerError(
                .configuration, "apps[\(app.id)]: privateKeyFile, keyId, issuerId and bundleId are required")
        }
        let key = try AppStoreSigningKey(privateKeyFile: keyFile, keyId: keyId, issuerId: issuerId, bundleId: bundleId)
        let configured = appleEnvironment(app)
        let fallback = configured == .production ? rules.sandboxFallback : .off
        let base = appleBaseURLs(for: app, rules: rules)
        func verifier(_ environment: Environment) throws -> SignedPayloadVerifier {
            let unverifiable = AppConfig.unverifiableEnvironments.contains(app.environment)
            let skips = unverifiable && (rules.skipsSignaturesDespiteRoots || app.rootCertificates.isEmpty)
            return try SignedPayloadVerifier(
                rootCertificateFiles: app.rootCertificates, bundleId: bundleId,
                appAppleId: environment == .production || rules.appAppleIdOutsideProduction ? app.appAppleId : nil,
                environment: environment, verifiesSignatures: !skips, sharesValidatedChains: true)
        }
        func access(_ environment: Environment, fallsBack: Bool) throws -> AppleStoreAccess {
            let configuration = AppStoreServerClient.Configuration(
                app: app.id, environment: environment, productionBaseURL: base.production, sandboxBaseURL: base.sandbox,
                sandboxFallback: fallsBack, sandboxBuckets: configured == .production)
            let client = AppStoreServerClient(
                configuration: configuration, key: key, transport: transport, quotaGate: gate, logger: logger)
            var verifiers = [environment: try verifier(environment)]
            if fallsBack { verifiers[.sandbox] = try verifier(.sandbox) }
            return AppleStoreAccess(client: client, verifiers: verifiers)
        }
        var accesses = [try access(configured, fallsBack: fallback == .sameClient)]
        if fallback == .ownClient { accesses.append(try access(.sandbox, fallsBack: false)) }
        return accesses
    }

    /// The production and sandbox hosts of an Apple app: Apple's, or `baseURL` and `sandboxBaseURL` as configured.
    static func appleBaseURLs(for app: AppConfig, rules: AppleClientRules) -> (production: URL, sandbox: URL) {
        let production =
            app.baseURL.flatMap(URL.init(string:)) ?? AppStoreServerClient.Configuration.defaultProductionBaseURL
        if let sandbox = app.sandboxBaseURL.flatMap(URL.init(string:)) { return (production, sandbox) }
        let sandboxAtBase =
            rules.sandboxUsesBaseURL && appleEnvironment(app) == .sandbox && app.baseURL != nil
            && app.sandboxBaseURL == nil
        return (production, sandboxAtBase ? production : AppStoreServerClient.Configuration.defaultSandboxBaseURL)
    }
}
