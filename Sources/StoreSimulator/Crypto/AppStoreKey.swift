import Crypto
import Foundation
import Synchronization

/// An App Store Connect In-App Purchase key: the `.p8` (PKCS#8 P-256) that signs storerecon's bearer tokens,
/// with its key id and issuer id. The simulator checks tokens against its public half.
public struct AppStoreKey: Sendable {
    /// The key id (`kid`).
    public let keyId: String
    /// The issuer id (`iss`).
    public let issuerId: String
    /// The private key, PKCS#8 PEM: the `.p8` file's content.
    public let privateKeyPEM: String
    let publicKey: P256.Signing.PublicKey
    /// Signatures already found valid (a client reuses its bearer token for minutes).
    let verified = SignatureMemo()

    /// Generates a new key with ids derived from the seed.
    public static func generate(seed: UInt64 = 0) -> AppStoreKey {
        let key = P256.Signing.PrivateKey()
        var random = SplitMix64(seed: SplitMix64.mix(seed, 0xA9))
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let keyId = String((0..<10).map { _ in letters[random.index(letters.count)] })
        let issuer = Scenario.uuid(random.next(), random.next())
        return AppStoreKey(
            keyId: keyId, issuerId: issuer, privateKeyPEM: key.pemRepresentation, publicKey: key.publicKey)
    }

    init(keyId: String, issuerId: String, privateKeyPEM: String, publicKey: P256.Signing.PublicKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKeyPEM = privateKeyPEM
        self.publicKey = publicKey
    }

    /// Loads a key from its `.p8` text and ids.
    /// - Throws: ``SimulatorError`` when the PEM is not a P-256 key.
    public static func load(pem: String, keyId: String, issuerId: String) throws -> AppStoreKey {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw SimulatorError(.files, "the .p8 file is not a P-256 private key")
        }
        return AppStoreKey(keyId: keyId, issuerId: issuerId, privateKeyPEM: pem, publicKey: key.publicKey)
    }

    /// Whether `signature` (raw r‖s) is a valid ES256 signature of `input`.
    func verifiesES256(_ signature: [UInt8], over input: Data) -> Bool {
        let memoKey = input + signature
        if verified.contains(memoKey) { return true }
        guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            publicKey.isValidSignature(parsed, for: input)
        else { return false }
        verified.insert(memoKey)
        return true
    }
}

/// The signed inputs and signatures a key has already verified: the same bytes verify the same way, so a token
/// sent with every call is checked once rather than with an ECDSA verification per call. Bounded: when full, it
/// starts again empty.
final class SignatureMemo: Sendable {
    /// The most entries kept.
    static let most = 1024
    private let entries = Mutex(Set<Data>())

    /// Whether these bytes were verified before.
    func contains(_ key: Data) -> Bool { entries.withLock { $0.contains(key) } }

    /// Remembers bytes that verified.
    func insert(_ key: Data) {
        entries.withLock { set in
            if set.count >= Self.most { set.removeAll(keepingCapacity: true) }
            set.insert(key)
        }
    }

    /// How many are kept (for tests).
    var count: Int { entries.withLock { $0.count } }
}
