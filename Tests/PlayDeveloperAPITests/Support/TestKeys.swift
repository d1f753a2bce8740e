import Foundation
import PlayDeveloperAPI
import _CryptoExtras

/// One RSA key per test run, generated in memory (no key is committed), and key files built from it.
enum TestKeys {
    static let privateKey: _RSA.Signing.PrivateKey = {
        do {
            return try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            fatalError("cannot generate a test RSA key: \(error)")
        }
    }()

    static var publicKey: _RSA.Signing.PublicKey { privateKey.publicKey }

    static let clientEmail = "storerecon@acme-play.iam.gserviceaccount.com"
    static let privateKeyID = "0123456789abcdef0123456789abcdef01234567"
    static let tokenURI = "https://oauth2.googleapis.com/token"

    /// A key file as Google writes it (PKCS#8 PEM in `private_key`).
    static func keyFileJSON(
        dropping: String? = nil, overriding: [String: Any] = [:]
    ) throws -> Data {
        var fields: [String: Any] = [
            "type": "service_account",
            "project_id": "acme-play",
            "private_key_id": privateKeyID,
            "private_key": privateKey.pkcs8PEMRepresentation,
            "client_email": clientEmail,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
        ]
        if let dropping { fields[dropping] = nil }
        for (name, value) in overriding { fields[name] = value }
        return try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    }

    static func key() throws -> ServiceAccountKey {
        try ServiceAccountKey(json: keyFileJSON(), source: "test-key.json")
    }
}
