import Crypto
import Foundation

/// An In-App Purchase key (`.p8`, PKCS#8 PEM, P-256) with the identifiers a bearer token names.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/creating-api-keys-to-authorize-api-requests)
public struct AppStoreSigningKey: Sendable {
    /// The issuer ID from App Store Connect.
    public let issuerId: String
    /// The key ID from App Store Connect.
    public let keyId: String
    /// The app's bundle identifier.
    public let bundleId: String
    /// Set when the key file can be read by its group or by others: say it to the operator.
    public let permissionWarning: String?
    let privateKey: P256.Signing.PrivateKey

    /// Loads the key from a `.p8` file.
    /// - Throws: ``AppStoreServerAPIError`` with code `privateKey` and one line naming the file and the problem
    ///   (missing, unreadable, not PEM, not a P-256 key). The key itself is never quoted.
    public init(privateKeyFile path: String, keyId: String, issuerId: String, bundleId: String) throws {
        func failure(_ problem: String) -> AppStoreServerAPIError {
            AppStoreServerAPIError(code: .privateKey, message: "private key file \(path): \(problem)")
        }
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { throw failure("does not exist") }
        guard !isDirectory.boolValue else { throw failure("is a directory, not a key file") }
        guard manager.isReadableFile(atPath: path), let data = manager.contents(atPath: path) else {
            throw failure("is not readable by this user")
        }
        let key = try Self.parse(pem: String(decoding: data, as: UTF8.self), failure: failure)
        var warning: String?
        if let mode = (try? manager.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
            warning =
                "private key file \(path) can be read by group or others (mode \(String(mode & 0o777, radix: 8))); "
                + "0600 is advised (chmod 600 \(path))"
        }
        self.init(issuerId: issuerId, keyId: keyId, bundleId: bundleId, privateKey: key, permissionWarning: warning)
    }

    /// Loads the key from PEM text (for keys held in an environment variable or a secret store).
    /// - Throws: ``AppStoreServerAPIError`` with code `privateKey` when the text is not a PEM P-256 private key.
    public init(privateKeyPEM pem: String, keyId: String, issuerId: String, bundleId: String) throws {
        let key = try Self.parse(
            pem: pem, failure: { AppStoreServerAPIError(code: .privateKey, message: "private key: \($0)") })
        self.init(issuerId: issuerId, keyId: keyId, bundleId: bundleId, privateKey: key, permissionWarning: nil)
    }

    private static func parse(pem: String, failure: (String) -> AppStoreServerAPIError) throws
        -> P256.Signing.PrivateKey
    {
        guard pem.contains("-----BEGIN "), pem.contains("-----END ") else {
            throw failure("is not PEM (expected a -----BEGIN PRIVATE KEY----- block)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw failure("is not a P-256 (ES256) private key in PKCS#8 PEM")
        }
    }

    private init(
        issuerId: String, keyId: String, bundleId: String, privateKey: P256.Signing.PrivateKey,
        permissionWarning: String?
    ) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.bundleId = bundleId
        self.privateKey = privateKey
        self.permissionWarning = permissionWarning
    }
}
