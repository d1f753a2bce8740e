import Crypto
import Foundation
import _CryptoExtras

/// A Google service account's key: what the simulator checks OAuth assertions against, and the JSON key file
/// an operator would download from Google Cloud.
public struct ServiceAccountKey: Sendable {
    /// `client_email`.
    public let clientEmail: String
    /// `private_key_id` (the JWT `kid`).
    public let privateKeyId: String
    /// The RSA key, PKCS#8 PEM (`private_key`).
    public let privateKeyPEM: String
    let publicKey: _RSA.Signing.PublicKey

    /// Generates a new RSA-2048 key.
    /// - Throws: when key generation fails.
    public static func generate(projectId: String = "storesim-demo", seed: UInt64 = 0) throws -> ServiceAccountKey {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        var random = SplitMix64(seed: SplitMix64.mix(seed, 0x5A))
        let keyId = (0..<3).map { _ in String(random.next(), radix: 16) }.joined()
        return ServiceAccountKey(
            clientEmail: "storerecon@\(projectId).iam.gserviceaccount.com",
            privateKeyId: String((String(repeating: "0", count: 48) + keyId).suffix(40)),
            privateKeyPEM: key.pkcs8PEMRepresentation, publicKey: key.publicKey)
    }

    init(clientEmail: String, privateKeyId: String, privateKeyPEM: String, publicKey: _RSA.Signing.PublicKey) {
        self.clientEmail = clientEmail
        self.privateKeyId = privateKeyId
        self.privateKeyPEM = privateKeyPEM
        self.publicKey = publicKey
    }

    /// Reads a service-account JSON key file.
    /// - Throws: ``SimulatorError`` when it is not one.
    public static func load(json data: Data) throws -> ServiceAccountKey {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let email = object["client_email"] as? String, let keyId = object["private_key_id"] as? String,
            let pem = object["private_key"] as? String,
            let key = try? _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
        else { throw SimulatorError(.files, "not a service-account key file") }
        return ServiceAccountKey(clientEmail: email, privateKeyId: keyId, privateKeyPEM: pem, publicKey: key.publicKey)
    }

    /// The key file's JSON, with `token_uri` pointing at the simulator.
    public func json(tokenURI: String, projectId: String = "storesim-demo") -> String {
        var json = JSONWriter()
        json.object { object in
            object.field("type", "service_account")
            object.field("project_id", projectId)
            object.field("private_key_id", privateKeyId)
            object.field("private_key", privateKeyPEM)
            object.field("client_email", clientEmail)
            object.field("client_id", "100000000000000000001")
            object.field("auth_uri", "https://accounts.google.com/o/oauth2/auth")
            object.field("token_uri", tokenURI)
            object.field("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs")
            object.field("universe_domain", "googleapis.com")
        }
        return json.text
    }

    /// Whether `signature` is a valid RS256 (PKCS#1 v1.5, SHA-256) signature of `input`.
    func verifiesRS256(_ signature: [UInt8], over input: Data) -> Bool {
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signature)
        return publicKey.isValidSignature(signature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
    }
}
