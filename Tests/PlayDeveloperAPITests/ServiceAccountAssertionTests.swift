import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import PlayDeveloperAPI

@Suite struct ServiceAccountAssertionTests {
    let issuedAt = Date(timeIntervalSince1970: 1_790_000_000.75)
    let audience = URL(string: "https://oauth2.googleapis.com/token")!

    func parts(_ jwt: String) throws -> [Data] {
        let pieces = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(pieces.count == 3)
        return try pieces.map { try #require(Base64URL.decode($0)) }
    }

    @Test func headerAndClaims() throws {
        let key = try TestKeys.key()
        let jwt = try ServiceAccountAssertion(key: key, audience: audience, issuedAt: issuedAt).signed(with: key)
        let decoded = try parts(jwt)
        let header = try JSONDecoder().decode(ServiceAccountAssertion.Header.self, from: decoded[0])
        #expect(header == .init(alg: "RS256", typ: "JWT", kid: TestKeys.privateKeyID))
        let claims = try JSONDecoder().decode(ServiceAccountAssertion.Claims.self, from: decoded[1])
        #expect(claims.iss == TestKeys.clientEmail)
        #expect(claims.scope == "https://www.googleapis.com/auth/androidpublisher")
        #expect(claims.aud == "https://oauth2.googleapis.com/token")
        #expect(claims.iat == 1_790_000_000)
        #expect(claims.exp == claims.iat + 3600)
        // Exactly these claims, no others.
        let object = try #require(try JSONSerialization.jsonObject(with: decoded[1]) as? [String: Any])
        #expect(Set(object.keys) == ["iss", "scope", "aud", "iat", "exp"])
    }

    @Test func signatureVerifiesWithPKCS1v15AndNotPSS() throws {
        let key = try TestKeys.key()
        let jwt = try ServiceAccountAssertion(key: key, audience: audience, issuedAt: issuedAt).signed(with: key)
        let pieces = jwt.split(separator: ".")
        let signingInput = Data("\(pieces[0]).\(pieces[1])".utf8)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(pieces[2])))
        #expect(signature.rawRepresentation.count == 256)
        #expect(
            TestKeys.publicKey.isValidSignature(
                signature, for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5))
        #expect(!TestKeys.publicKey.isValidSignature(signature, for: SHA256.hash(data: signingInput), padding: .PSS))
        // PKCS#1 v1.5 is deterministic: the same input signs the same.
        let again = try ServiceAccountAssertion(key: key, audience: audience, issuedAt: issuedAt).signed(with: key)
        #expect(again == jwt)
    }

    @Test func lifetimeIsCappedAtAnHour() throws {
        let key = try TestKeys.key()
        let assertion = ServiceAccountAssertion(key: key, audience: audience, issuedAt: issuedAt, lifetime: 7200)
        #expect(assertion.claims.exp - assertion.claims.iat == 3600)
    }

    @Test(arguments: [
        (Data(), ""), (Data([0xFB]), "-w"), (Data([0xFF, 0xFF]), "__8"),
        (Data("any carnal pleas".utf8), "YW55IGNhcm5hbCBwbGVhcw"),
    ])
    func base64URLWithoutPadding(data: Data, text: String) {
        #expect(Base64URL.encode(data) == text)
        #expect(Base64URL.decode(text) == data)
    }

    @Test func base64URLRejectsStandardAlphabetAndPadding() {
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("YQ==") == nil)
        #expect(Base64URL.decode("Y") == nil)
    }
}
