import Foundation

/// The files `storesim init` writes and `storesim serve` reads, in one directory:
///
/// - `AuthKey_<KEYID>.p8`: the App Store Connect In-App Purchase key (PKCS#8 P-256, PEM), mode 0600;
///   `apple-key.json`: `{"keyId","issuerId","privateKeyFile"}`.
/// - `play-sa.json`: the Google service-account key (`client_email`, `private_key` RSA-2048 PEM,
///   `private_key_id`, `token_uri` = `http://HOST:PORT/token`), mode 0600.
/// - `SimulatorRootCA.der`: the root that Apple payloads chain to (configure it in `rootCertificates`);
///   `simulator-ca/`: root, intermediate and leaf certificates and the leaf key, so that every serve signs with
///   the same chain.
/// - `scenario.json`: the ``ScenarioSpec`` (serve regenerates the same scenario from it).
/// - `simulator.json`: `{"host","port","clock":"wall"|"fixed"}`: how serve listens by default.
/// - `storerecon.yaml`: storerecon's configuration pointing at all of the above and at `http://HOST:PORT`.
///
/// `init --port` fixes the port written into `storerecon.yaml` and `play-sa.json`; `serve` listens there, and if
/// it is told to listen elsewhere (`serve --port`, 0 for any), it rewrites both files with the port it got.
public struct SimulatorDirectory: Sendable {
    /// How `serve` runs by default.
    public struct ServeSettings: Codable, Sendable, Equatable {
        /// Address.
        public var host: String
        /// Port written into the configuration.
        public var port: Int
        /// `wall` (simulator time follows the wall clock) or `fixed` (starts at the scenario anchor).
        public var clock: String
        /// Database URL written into `storerecon.yaml`.
        public var databaseURL: String

        /// Creates settings.
        public init(
            host: String = "127.0.0.1", port: Int = 8787, clock: String = "wall",
            databaseURL: String = "postgresql:///storerecon"
        ) {
            self.host = host
            self.port = port
            self.clock = clock
            self.databaseURL = databaseURL
        }
    }

    /// The directory.
    public let url: URL

    /// A directory (absolute paths are written into the configuration).
    public init(path: String) {
        url = URL(fileURLWithPath: path).standardizedFileURL
    }

    private func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes everything.
    /// - Parameter financialReports: whether `storerecon.yaml` configures the financial reports the simulator serves
    ///   (`earningsBucket`, `vendorNumber` and the App Store Connect key), so `sync payouts` fetches them.
    /// - Throws: ``SimulatorError`` when a file cannot be written.
    public func write(
        spec: ScenarioSpec, keys: SimulatorKeys, settings: ServeSettings, financialReports: Bool = true
    ) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let keyFile = "AuthKey_\(keys.appStoreKey.keyId).p8"
            try writeSecret(keys.appStoreKey.privateKeyPEM, to: file(keyFile))
            let appleKey = try JSONSerialization.data(
                withJSONObject: [
                    "keyId": keys.appStoreKey.keyId, "issuerId": keys.appStoreKey.issuerId, "privateKeyFile": keyFile,
                ], options: [.sortedKeys, .prettyPrinted])
            try appleKey.write(to: file("apple-key.json"))
            try Data(keys.chain.rootDER).write(to: file("SimulatorRootCA.der"))
            try keys.chain.write(to: file("simulator-ca"))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            try encoder.encode(spec).write(to: file("scenario.json"))
            try encoder.encode(settings).write(to: file("simulator.json"))
            try writeEndpoints(
                spec: spec, keys: keys, settings: settings, port: settings.port, financialReports: financialReports)
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.files, "cannot write into \(url.path): \(error.localizedDescription)")
        }
    }

    /// Writes the two files that name the port: `play-sa.json` and `storerecon.yaml`.
    /// - Parameter oldPort: the port the files name now (`serve` bound another): an existing `storerecon.yaml` then
    ///   keeps every edit made to it, and only its simulator URLs change.
    /// - Parameter financialReports: as in ``write(spec:keys:settings:financialReports:)``, for a new file.
    public func writeEndpoints(
        spec: ScenarioSpec, keys: SimulatorKeys, settings: ServeSettings, port: Int, replacing oldPort: Int? = nil,
        financialReports: Bool = true
    ) throws {
        let base = "http://\(settings.host):\(port)"
        try writeSecret(keys.serviceAccount.json(tokenURI: base + "/token"), to: file("play-sa.json"))
        let yaml: String
        if let oldPort, let existing = try? String(contentsOf: file("storerecon.yaml"), encoding: .utf8) {
            yaml = existing.replacingOccurrences(of: "http://\(settings.host):\(oldPort)", with: base)
        } else {
            yaml = StoreReconConfigWriter(
                spec: spec, keys: keys, directory: url, baseURL: base, databaseURL: settings.databaseURL,
                financialReports: financialReports
            ).yaml()
        }
        try Data(yaml.utf8).write(to: file("storerecon.yaml"))
    }

    /// Reads what ``write(spec:keys:settings:)`` wrote.
    /// - Throws: ``SimulatorError`` naming the missing or bad file.
    public func load() throws -> (spec: ScenarioSpec, keys: SimulatorKeys, settings: ServeSettings) {
        func read(_ name: String) throws -> Data {
            guard let data = FileManager.default.contents(atPath: file(name).path) else {
                throw SimulatorError(.files, "\(file(name).path) is missing: run storesim init --dir \(url.path)")
            }
            return data
        }
        let decoder = JSONDecoder()
        let spec: ScenarioSpec
        let settings: ServeSettings
        do {
            spec = try decoder.decode(ScenarioSpec.self, from: try read("scenario.json"))
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.scenario, "scenario.json: \(error)")
        }
        do {
            settings = try decoder.decode(ServeSettings.self, from: try read("simulator.json"))
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.files, "simulator.json: \(error)")
        }
        guard let appleKey = (try? JSONSerialization.jsonObject(with: try read("apple-key.json"))) as? [String: String],
            let keyId = appleKey["keyId"], let issuerId = appleKey["issuerId"], let keyFile = appleKey["privateKeyFile"]
        else { throw SimulatorError(.files, "apple-key.json: expected keyId, issuerId and privateKeyFile") }
        let keys = SimulatorKeys(
            chain: try SigningChain.load(from: file("simulator-ca")),
            appStoreKey: try AppStoreKey.load(
                pem: String(decoding: try read(keyFile), as: UTF8.self), keyId: keyId, issuerId: issuerId),
            serviceAccount: try ServiceAccountKey.load(json: try read("play-sa.json")))
        return (spec, keys, settings)
    }

    private func writeSecret(_ text: String, to file: URL) throws {
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }
}
