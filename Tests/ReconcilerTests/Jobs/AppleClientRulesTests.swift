import AppStoreServerAPI
import Foundation
import Logging
import RateLimiting
import Reconciler
import StoreSimulator
import Testing

/// The one Apple client factory gives each caller what it had before the two factories were merged: the refund
/// jobs one client that falls back to sandbox itself, sandbox at `baseURL` when only that is set, and signatures
/// checked whenever roots are configured; the recheck a client per environment, Apple's sandbox host, and Xcode
/// payloads never checked.
@Suite("Apple client rules")
struct AppleClientRulesTests {
    static let base = "http://127.0.0.1:9"

    /// Three Apple apps (production, sandbox with only `baseURL`, Xcode with a root) with a real key and root.
    static func configuration() throws -> Configuration {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apple-rules-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("AuthKey.p8")
        let root = directory.appendingPathComponent("root.der")
        try Data(AppStoreKey.generate().privateKeyPEM.utf8).write(to: key)
        try Data(try SigningChain.generate().rootDER).write(to: root)
        func app(_ id: String, _ environment: String, extra: String = "") -> String {
            """
              - id: \(id)
                platform: apple
                bundleId: com.example.app
                appAppleId: 1234
                environment: \(environment)
                issuerId: "issuer"
                keyId: "KEY1"
                privateKeyFile: \(key.path)
                rootCertificates: [\(root.path)]
            \(extra)
            """
        }
        let yaml =
            "database:\n  url: \"host=/tmp dbname=none\"\napps:\n" + app("prod", "production")
            + app("sand", "sandbox", extra: "    baseURL: \(base)\n") + app("xcode", "xcode")
        return try ConfigurationLoader(environment: [:]).load(text: yaml, source: "rules.yaml")
    }

    static func app(_ id: String, in configuration: Configuration) throws -> AppConfig {
        try #require(configuration.apps.first { $0.id == id })
    }

    let gate = LocalQuotaGate(clock: ContinuousClock())
    let logger = Logger(label: "test")

    @Test func aProductionAppFallsBackInItsOneClientForRefundsAndWithASecondClientForTheRecheck() throws {
        let configuration = try Self.configuration()
        let app = try Self.app("prod", in: configuration)
        let refunds = try StoreClients.apple(for: app, configuration: configuration, gate: gate, logger: logger)
        #expect(refunds.client.configuration.environment == .production)
        #expect(refunds.client.configuration.sandboxFallback)
        #expect(Set(refunds.verifiers.keys) == [.production, .sandbox])
        #expect(try refunds.verifier(for: .sandbox).appAppleId == 1234)

        let recheck = try StoreClients.apple(for: app, sandboxFallback: true, gate: gate, logger: logger)
        #expect(recheck.map(\.client.configuration.environment) == [.production, .sandbox])
        #expect(recheck.allSatisfy { !$0.client.configuration.sandboxFallback })
        #expect(recheck.map(\.verifier.environment) == [.production, .sandbox])
        #expect(recheck.map(\.verifier.appAppleId) == [1234, nil])
        // A production app's sandbox calls, from either client, are counted in the sandbox fallback buckets.
        #expect(refunds.client.configuration.sandboxBuckets)
        #expect(recheck.allSatisfy { $0.client.configuration.sandboxBuckets })

        let noFallback = try StoreClients.apple(for: app, sandboxFallback: false, gate: gate, logger: logger)
        #expect(noFallback.map(\.client.configuration.environment) == [.production])
    }

    @Test func aSandboxAppWithOnlyABaseURLAsksItForRefundsButAsksApplesSandboxForTheRecheck() throws {
        let configuration = try Self.configuration()
        let app = try Self.app("sand", in: configuration)
        let refunds = try StoreClients.apple(for: app, configuration: configuration, gate: gate, logger: logger)
        #expect(refunds.client.configuration.environment == .sandbox)
        #expect(refunds.client.configuration.sandboxBaseURL.absoluteString == Self.base)
        #expect(!refunds.client.configuration.sandboxFallback)
        #expect(try refunds.verifier(for: .sandbox).appAppleId == 1234)

        let recheck = try #require(
            try StoreClients.apple(for: app, sandboxFallback: true, gate: gate, logger: logger).only)
        #expect(recheck.client.configuration.environment == .sandbox)
        #expect(recheck.client.configuration.sandboxBaseURL.absoluteString == "https://api.storekit-sandbox.apple.com")
        #expect(recheck.verifier.appAppleId == nil)
        #expect(!refunds.client.configuration.sandboxBuckets && !recheck.client.configuration.sandboxBuckets)
    }

    @Test func anXcodeAppWithARootIsCheckedForRefundsButNotForTheRecheck() throws {
        let configuration = try Self.configuration()
        let app = try Self.app("xcode", in: configuration)
        let refunds = try StoreClients.apple(for: app, configuration: configuration, gate: gate, logger: logger)
        #expect(try refunds.verifier(for: .xcode).verifiesSignatures)

        let recheck = try #require(
            try StoreClients.apple(for: app, sandboxFallback: true, gate: gate, logger: logger).only)
        #expect(recheck.client.configuration.environment == .xcode)
        #expect(!recheck.verifier.verifiesSignatures)

        var rootless = app
        rootless.rootCertificates = []
        let unchecked = try StoreClients.apple(for: rootless, configuration: configuration, gate: gate, logger: logger)
        #expect(try !unchecked.verifier(for: .xcode).verifiesSignatures)
    }
}

extension Array {
    /// The one element, or `nil` when there are none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
