import Foundation
import Postgres
import Reconciler
import StoreSimulator

/// Wires a running store simulator to a fresh database: writes the key files it issued, and a configuration whose
/// apps and products are the scenario's, pointing at the simulator's loopback URLs.
public struct SimulatedStores: Sendable {
    /// The running simulator.
    public let simulator: StoreSimulator
    /// Where the key files and `storerecon.yaml` are.
    public let directory: URL
    /// The database's conninfo.
    public let conninfo: String
    /// The loaded configuration (validated as any operator's file would be).
    public let configuration: Configuration

    /// Writes the files, creates and migrates a database, and loads the configuration.
    /// - Parameters:
    ///   - extraYAML: more top-level configuration (e.g. `limits:` or `sync:` blocks).
    ///   - conninfo: an existing empty database to use instead of a new one on the test cluster.
    ///   - payouts: also configure the financial reports (`earningsBucket`, `vendorNumber` and the App Store Connect
    ///     key, the simulator's own) so `sync payouts` and `run nightly` fetch them.
    public init(
        simulator: StoreSimulator, databasePrefix: String, extraYAML: String = "", conninfo existing: String? = nil,
        payouts: Bool = false
    )
        throws
    {
        self.simulator = simulator
        conninfo = try existing ?? TestDatabase.create(prefix: databasePrefix)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("stores-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("play-sa.json")
        let p8 = directory.appendingPathComponent("AuthKey.p8")
        let root = directory.appendingPathComponent("root.der")
        try Data(simulator.serviceAccountJSON.utf8).write(to: keyFile)
        try Data(simulator.keys.appStoreKey.privateKeyPEM.utf8).write(to: p8)
        try Data(simulator.keys.chain.rootDER).write(to: root)
        for file in [keyFile, p8] {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
        var yaml = "database:\n  url: \"\(conninfo)\"\napps:\n"
        yaml += Self.appsYAML(simulator, keyFile: keyFile, p8: p8, root: root, payouts: payouts)
        yaml += "products:\n"
        for product in simulator.products {
            yaml += "  \(product.productId): { tier: \(product.tier), priceMilli: \(product.priceMilli), "
            yaml += "currency: \(product.currency) }\n"
        }
        yaml += extraYAML
        let path = directory.appendingPathComponent("storerecon.yaml")
        try yaml.write(to: path, atomically: true, encoding: .utf8)
        configuration = try ConfigurationLoader(environment: [:]).load(path: path.path)
        let connection = try PostgresConnection(conninfo: conninfo)
        defer { connection.close() }
        try Migrator(connection: connection).migrate()
        try AppRegistry.sync(configuration, on: connection)
    }

    /// The `apps:` entries of the simulator's apps, with the key files written for them.
    private static func appsYAML(
        _ simulator: StoreSimulator, keyFile: URL, p8: URL, root: URL, payouts: Bool
    ) -> String {
        var yaml = ""
        for app in simulator.apps {
            switch app.platform {
            case .apple:
                yaml += """
                      - id: \(app.id)
                        platform: apple
                        bundleId: \(app.storeId)
                        appAppleId: \(app.appAppleId ?? 1)
                        environment: production
                        issuerId: "\(simulator.keys.appStoreKey.issuerId)"
                        keyId: "\(simulator.keys.appStoreKey.keyId)"
                        privateKeyFile: \(p8.path)
                        rootCertificates: [\(root.path)]
                        baseURL: \(simulator.appleProductionBaseURL.absoluteString)
                        sandboxBaseURL: \(simulator.appleSandboxBaseURL.absoluteString)

                    """
                if payouts, let vendor = simulator.vendorNumber(app: app.id) {
                    yaml += """
                            vendorNumber: "\(vendor)"
                            connectIssuerId: "\(simulator.keys.appStoreKey.issuerId)"
                            connectKeyId: "\(simulator.keys.appStoreKey.keyId)"
                            connectPrivateKeyFile: \(p8.path)
                            connectBaseURL: \(simulator.baseURL.absoluteString)

                        """
                }
            case .google:
                yaml += """
                      - id: \(app.id)
                        platform: google
                        packageName: \(app.storeId)
                        serviceAccountFile: \(keyFile.path)
                        baseURL: \(simulator.googleAPIBaseURL.absoluteString)
                        tokenURL: \(simulator.googleTokenURL.absoluteString)

                    """
                if payouts, let bucket = simulator.earningsBucket(app: app.id) {
                    yaml += """
                            earningsBucket: \(bucket)
                            storageBaseURL: \(simulator.baseURL.absoluteString)

                        """
                }
            }
        }
        return yaml
    }

    /// The configuration file's path.
    public var configPath: String { directory.appendingPathComponent("storerecon.yaml").path }

    /// The configured app of a platform.
    public func app(_ platform: AppConfig.Platform) -> AppConfig {
        configuration.apps.first { $0.platform == platform }!
    }

    /// The simulator's current time, for jobs that must see the scenario's "now".
    public var now: @Sendable () -> Date {
        let clock = simulator.clock
        return { Date(timeIntervalSince1970: Double(clock.nowMillis()) / 1000) }
    }
}
