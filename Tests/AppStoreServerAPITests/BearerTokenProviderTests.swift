import AppStoreServerAPI
import Crypto
import Foundation
import Synchronization
import Testing

@Suite struct BearerTokenProviderTests {
    static func key() throws -> AppStoreSigningKey {
        try AppStoreSigningKey(
            privateKeyFile: AppleReference.path("certs/testSigningKey.p8"), keyId: "KEY123", issuerId: "issuer-uuid",
            bundleId: "com.example")
    }

    static func decode(_ part: Substring) throws -> [String: Any] {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func headerClaimsAndSignature() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000.7)
        let provider = BearerTokenProvider(key: try Self.key(), now: { now })
        let token = try provider.token()
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)

        let header = try Self.decode(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY123")
        #expect(header["typ"] as? String == "JWT")

        let claims = try Self.decode(parts[1])
        #expect(claims["iss"] as? String == "issuer-uuid")
        #expect(claims["aud"] as? String == "appstoreconnect-v1")
        #expect(claims["bid"] as? String == "com.example")
        #expect(claims["iat"] as? Int == 1_700_000_000)
        #expect(claims["exp"] as? Int == 1_700_000_300)

        let pem = try AppleReference.text("certs/testSigningKey.p8")
        let publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        var signatureText = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while signatureText.count % 4 != 0 { signatureText += "=" }
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try #require(Data(base64Encoded: signatureText)))
        #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    /// A one-minute token is reused until a fifth of its life (12 s) is left, not re-signed half-way.
    @Test func aShortTokenIsRenewedByAShareOfItsLife() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        let provider = BearerTokenProvider(key: try Self.key(), lifetime: 60, now: { clock.withLock { $0 } })
        let first = try provider.token()
        clock.withLock { $0 = $0.addingTimeInterval(47) }
        #expect(try provider.token() == first)
        clock.withLock { $0 = $0.addingTimeInterval(2) }
        #expect(try provider.token() != first)
    }

    @Test func tokenIsCachedAndResignedBeforeExpiry() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        let provider = BearerTokenProvider(key: try Self.key(), now: { clock.withLock { $0 } })
        let first = try provider.token()
        clock.withLock { $0 = $0.addingTimeInterval(200) }
        #expect(try provider.token() == first)
        // 300 s lifetime, renewed when less than 60 s remain.
        clock.withLock { $0 = $0.addingTimeInterval(41) }
        let second = try provider.token()
        #expect(second != first)
        let claims = try Self.decode(second.split(separator: ".")[1])
        #expect(claims["iat"] as? Int == 1_700_000_241)
    }
}
