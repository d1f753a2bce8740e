/// The key material a simulator run uses: the Apple signing chain, the Apple API key storerecon signs bearer
/// tokens with, and the Google service account.
public struct SimulatorKeys: Sendable {
    /// The chain that signs Apple payloads; trust ``SigningChain/rootDER``.
    public var chain: SigningChain
    /// The App Store Connect key (`.p8`, key id, issuer id).
    public var appStoreKey: AppStoreKey
    /// The Google service account.
    public var serviceAccount: ServiceAccountKey

    /// Creates key material from parts.
    public init(chain: SigningChain, appStoreKey: AppStoreKey, serviceAccount: ServiceAccountKey) {
        self.chain = chain
        self.appStoreKey = appStoreKey
        self.serviceAccount = serviceAccount
    }

    /// Generates all of it (an RSA-2048 key takes a moment).
    /// - Parameter seed: seeds the key and issuer ids, not the keys themselves.
    public static func generate(seed: UInt64 = 0) throws -> SimulatorKeys {
        SimulatorKeys(
            chain: try SigningChain.generate(), appStoreKey: AppStoreKey.generate(seed: seed),
            serviceAccount: try ServiceAccountKey.generate(seed: seed))
    }
}
