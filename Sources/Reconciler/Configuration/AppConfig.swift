import Foundation
import StoreHTTP

/// One entry of `apps:`. Apple and Google apps share the type; ``validate(path:)`` checks that each has the keys
/// its platform needs and none of the other platform's.
public struct AppConfig: Decodable, Sendable, Equatable {
    /// The store an app is sold through.
    public enum Platform: String, Decodable, Sendable, Equatable, CaseIterable {
        case apple, google
    }

    /// Unique id, used in logs, the database and `--app`.
    public var id: String
    /// Which store.
    public var platform: Platform
    /// Apple: the bundle id.
    public var bundleId: String?
    /// Apple: the numeric app id (required in production, checked on notifications).
    public var appAppleId: Int64?
    /// Apple: production, sandbox, xcode or localtesting (default production).
    public var environment: String
    /// Apple: App Store Connect issuer id.
    public var issuerId: String?
    /// Apple: the In-App Purchase key's id.
    public var keyId: String?
    /// Apple: path of the `.p8` key file.
    public var privateKeyFile: String?
    /// Apple: DER or PEM root certificates that signed payloads must chain to.
    public var rootCertificates: [String]
    /// Store API base URL (Apple production host, Google API host, or the simulator).
    public var baseURL: String?
    /// Apple: the sandbox base URL used on 4040010 fallback.
    public var sandboxBaseURL: String?
    /// Google: the package name.
    public var packageName: String?
    /// Google: path of the service-account key file.
    public var serviceAccountFile: String?
    /// Google: token endpoint override (default: the key file's `token_uri`).
    public var tokenURL: String?
    /// Google: the developer account's Cloud Storage bucket of financial reports (`pubsite_prod_rev_<digits>`);
    /// set it to fetch earnings reports (`sync payouts`).
    public var earningsBucket: String?
    /// Google: Cloud Storage JSON API base URL (default `https://storage.googleapis.com`).
    public var storageBaseURL: String?
    /// Apple: the vendor number of the financial reports; set it (with the connect keys) for `sync payouts`.
    public var vendorNumber: String?
    /// Apple: the App Store Connect API key's issuer id (a Team key with the Finance role).
    public var connectIssuerId: String?
    /// Apple: the App Store Connect API key's id.
    public var connectKeyId: String?
    /// Apple: path of the App Store Connect API key (`.p8`).
    public var connectPrivateKeyFile: String?
    /// Apple: App Store Connect API base URL (default `https://api.appstoreconnect.apple.com`).
    public var connectBaseURL: String?
    /// Google: storerecon's own Pub/Sub pull subscription on the app's RTDN topic
    /// (`projects/<project>/subscriptions/<name>`), for refund reviews; unset: Google's requests are not read.
    public var rtdnSubscription: String?
    /// Google: the Cloud Pub/Sub host (default `https://pubsub.googleapis.com`).
    public var pubsubBaseURL: String?
    /// How the stores' refund requests are answered (`run refund-requests`); `nil`: facts only (`data_only`).
    public var refundRequests: RefundRequestRules?
    /// Apple keys with a default that the entry named (`environment`, `rootCertificates`): a Google app refuses them.
    private var appleKeysGiven: [String] = []

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, platform, bundleId, appAppleId, environment, issuerId, keyId, privateKeyFile, rootCertificates
        case baseURL, sandboxBaseURL, packageName, serviceAccountFile, tokenURL
        case earningsBucket, storageBaseURL, vendorNumber, connectIssuerId, connectKeyId, connectPrivateKeyFile
        case connectBaseURL, refundRequests, rtdnSubscription, pubsubBaseURL
    }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        platform = try container.decode(Platform.self, forKey: .platform)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
        environment = try container.decodeIfPresent(String.self, forKey: .environment) ?? "production"
        issuerId = try container.decodeIfPresent(String.self, forKey: .issuerId)
        keyId = try container.decodeIfPresent(String.self, forKey: .keyId)
        privateKeyFile = try container.decodeIfPresent(String.self, forKey: .privateKeyFile)
        rootCertificates = try container.decodeIfPresent([String].self, forKey: .rootCertificates) ?? []
        appleKeysGiven = [CodingKeys.environment, .rootCertificates].filter(container.contains).map(\.stringValue)
        baseURL = try container.decodeIfPresent(String.self, forKey: .baseURL)
        sandboxBaseURL = try container.decodeIfPresent(String.self, forKey: .sandboxBaseURL)
        packageName = try container.decodeIfPresent(String.self, forKey: .packageName)
        serviceAccountFile = try container.decodeIfPresent(String.self, forKey: .serviceAccountFile)
        tokenURL = try container.decodeIfPresent(String.self, forKey: .tokenURL)
        earningsBucket = try container.decodeIfPresent(String.self, forKey: .earningsBucket)
        storageBaseURL = try container.decodeIfPresent(String.self, forKey: .storageBaseURL)
        vendorNumber = try container.decodeIfPresent(String.self, forKey: .vendorNumber)
        connectIssuerId = try container.decodeIfPresent(String.self, forKey: .connectIssuerId)
        connectKeyId = try container.decodeIfPresent(String.self, forKey: .connectKeyId)
        connectPrivateKeyFile = try container.decodeIfPresent(String.self, forKey: .connectPrivateKeyFile)
        connectBaseURL = try container.decodeIfPresent(String.self, forKey: .connectBaseURL)
        refundRequests = try container.decodeIfPresent(RefundRequestRules.self, forKey: .refundRequests)
        rtdnSubscription = try container.decodeIfPresent(String.self, forKey: .rtdnSubscription)
        pubsubBaseURL = try container.decodeIfPresent(String.self, forKey: .pubsubBaseURL)
    }

    /// Whether `sync payouts` and `run nightly` fetch this app's financial reports.
    public var fetchesPayouts: Bool {
        platform == .google ? earningsBucket != nil : vendorNumber != nil
    }

    /// The store's identifier of the app: bundle id or package name.
    public var storeAppId: String {
        (platform == .apple ? bundleId : packageName) ?? ""
    }

    /// Google's Cloud Pub/Sub host.
    public static let defaultPubSubBaseURL = URL(string: "https://pubsub.googleapis.com")!

    /// Apple environments in which signature checks may be turned off.
    public static let unverifiableEnvironments: Set<String> = ["xcode", "localtesting"]

    /// Checks the keys the app's platform needs.
    /// - Parameter path: the key path of this entry, such as `apps[1]`, for the error.
    /// - Throws: `ReconcilerError` (`.configuration`) naming the key.
    public func validate(path: String) throws {
        let keys = KeyCheck(path: path, platform: platform)
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw keys.fail("id", "expected letters, digits, '-', '_' or '.'")
        }
        switch platform {
        case .apple: try validateApple(keys)
        case .google:
            try keys.require(packageName, "packageName")
            try keys.require(serviceAccountFile, "serviceAccountFile")
            try Self.validateSubscription(rtdnSubscription, key: "\(path).rtdnSubscription")
            try keys.forbid(appAppleId, "appAppleId")
            for (value, key) in [
                (bundleId, "bundleId"), (issuerId, "issuerId"), (keyId, "keyId"), (privateKeyFile, "privateKeyFile"),
                (sandboxBaseURL, "sandboxBaseURL"), (vendorNumber, "vendorNumber"),
                (connectIssuerId, "connectIssuerId"), (connectKeyId, "connectKeyId"),
                (connectPrivateKeyFile, "connectPrivateKeyFile"), (connectBaseURL, "connectBaseURL"),
            ] {
                try keys.forbid(value, key)
            }
            for key in appleKeysGiven { try keys.forbid(key, key) }
        }
        for (key, value) in [
            ("baseURL", baseURL), ("sandboxBaseURL", sandboxBaseURL), ("tokenURL", tokenURL),
            ("storageBaseURL", storageBaseURL), ("connectBaseURL", connectBaseURL), ("pubsubBaseURL", pubsubBaseURL),
        ] {
            if let value { try Self.validateStoreURL(value, key: "\(path).\(key)") }
        }
    }

    private func validateApple(_ keys: KeyCheck) throws {
        try keys.require(bundleId, "bundleId")
        try keys.require(issuerId, "issuerId")
        try keys.require(keyId, "keyId")
        try keys.require(privateKeyFile, "privateKeyFile")
        let environments: Set<String> = ["production", "sandbox", "xcode", "localtesting"]
        guard environments.contains(environment) else {
            throw keys.fail("environment", "expected one of production, sandbox, xcode, localtesting")
        }
        if environment == "production" && appAppleId == nil {
            throw keys.fail("appAppleId", "required when environment is production")
        }
        if rootCertificates.isEmpty && !Self.unverifiableEnvironments.contains(environment) {
            throw keys.fail("rootCertificates", "at least one root certificate file is required to verify payloads")
        }
        for (value, key) in [
            (packageName, "packageName"), (serviceAccountFile, "serviceAccountFile"), (tokenURL, "tokenURL"),
            (earningsBucket, "earningsBucket"), (storageBaseURL, "storageBaseURL"),
            (rtdnSubscription, "rtdnSubscription"), (pubsubBaseURL, "pubsubBaseURL"),
        ] {
            try keys.forbid(value, key)
        }
        if vendorNumber != nil {
            try keys.require(connectIssuerId, "connectIssuerId")
            try keys.require(connectKeyId, "connectKeyId")
            try keys.require(connectPrivateKeyFile, "connectPrivateKeyFile")
        }
    }

    /// The errors of one entry's keys, each naming its key path.
    private struct KeyCheck {
        let path: String
        let platform: Platform

        func fail(_ key: String, _ expectation: String) -> ReconcilerError {
            ReconcilerError(.configuration, "\(path).\(key): \(expectation)")
        }

        func require(_ value: String?, _ key: String) throws {
            guard let value, !value.isEmpty else { throw fail(key, "required for \(platform.rawValue) apps") }
        }

        func forbid(_ value: Any?, _ key: String) throws {
            if value != nil { throw fail(key, "only valid for \(platform == .apple ? "google" : "apple") apps") }
        }
    }

    /// A Pub/Sub subscription is named `projects/<project>/subscriptions/<name>`.
    static func validateSubscription(_ name: String?, key: String) throws {
        guard let name else { return }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "projects", parts[2] == "subscriptions", !parts[1].isEmpty,
            !parts[3].isEmpty
        else { throw ReconcilerError(.configuration, "\(key): expected projects/<project>/subscriptions/<name>") }
    }

    /// Store URLs must be https; plain http is allowed only on loopback (the simulator), so TLS checks can never
    /// be turned off for a real host.
    static func validateStoreURL(_ text: String, key: String) throws {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host else {
            throw ReconcilerError(.configuration, "\(key): expected an absolute URL")
        }
        if scheme == "https" { return }
        guard scheme == "http", LoopbackHost.contains(host) else {
            throw ReconcilerError(.configuration, "\(key): expected an https URL (plain http only on loopback)")
        }
    }
}
