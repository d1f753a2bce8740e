import AppStoreServerAPI
import Crypto
import Foundation
import StoreSimulator
import SwiftASN1
import Testing
import X509

/// Forgeries an attacker who controls the network or a look-alike store could send, beyond the single-check cases of
/// `SignedPayloadVerifierTests`: each is rejected, and with the reason that names it.
@Suite struct ForgedPayloadTests {
    static func code(_ body: () async throws -> Void) async -> AppStoreServerAPIError.Code? {
        await SignedPayloadVerifierTests.code(body)
    }

    /// A complete chain of the attacker's own, with Apple's marker OIDs on intermediate and leaf.
    @Test func aWholeChainOfAnotherRootWithApplesOIDsIsRejected() async throws {
        let forged = try SigningChain.generate()
        let x5c = [forged.leafDER, forged.intermediateDER, forged.rootDER].map { Data($0).base64EncodedString() }
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: forged.leafKey)
        let verifier = try SignedPayloadVerifierTests.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidCertificateChain)
        // The trusted root sent as x5c[2] does not help either.
        let withTrustedRoot = try TestJWS.make(
            payload: TestJWS.transaction(), x5c: [x5c[0], x5c[1], try TestJWS.testChain().x5c[2]], key: forged.leafKey)
        #expect(
            await Self.code { _ = try await verifier.verifyTransaction(withTrustedRoot) } == .invalidCertificateChain)
    }

    /// An intermediate that names the trusted root as its issuer (and carries Apple's OID) but is signed by the
    /// attacker's key.
    @Test func anIntermediateClaimingTheTrustedRootAsIssuerIsRejected() async throws {
        let testCA = try Certificate(derEncoded: Array(try AppleReference.data("certs/testCA.der")))
        let attacker = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("Apple Worldwide Developer Relations") }
        let intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(attacker.publicKey),
            notValidBefore: testCA.notValidBefore, notValidAfter: testCA.notValidAfter, issuer: testCA.subject,
            subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Certificate.Extension(oid: SigningChain.intermediateMarker, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(attacker))
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
            notValidBefore: testCA.notValidBefore, notValidAfter: testCA.notValidAfter, issuer: intermediateName,
            subject: try DistinguishedName { CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Certificate.Extension(oid: SigningChain.leafMarker, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: .init(attacker))
        let x5c = [try Self.base64(leaf), try Self.base64(intermediate), try TestJWS.testChain().x5c[2]]
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: leafKey)
        let verifier = try SignedPayloadVerifierTests.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidCertificateChain)
    }

    /// `alg: none` with an empty signature, the classic form.
    @Test func algNoneWithoutASignatureIsRejected() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let signed = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, alg: "none", key: key)
        let unsigned = signed.split(separator: ".").prefix(2).joined(separator: ".") + "."
        let verifier = try SignedPayloadVerifierTests.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(unsigned) } == .malformedJWS)
        let bare = TestJWS.base64URL(Data(#"{"alg":"none"}"#.utf8)) + "." + unsigned.split(separator: ".")[1] + "."
        #expect(await Self.code { _ = try await verifier.verifyTransaction(bare) } == .malformedJWS)
    }

    /// HS256 keyed with the leaf certificate's public key (the key-confusion attack on verifiers that pick the
    /// algorithm from the header).
    @Test func hs256KeyedWithTheLeafsPublicKeyIsRejected() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let header = TestJWS.base64URL(try TestJWS.json(["alg": "HS256", "x5c": x5c]))
        let input = header + "." + TestJWS.base64URL(try TestJWS.json(TestJWS.transaction()))
        for secret in [key.publicKey.derRepresentation, key.publicKey.x963Representation, Data(x5c[0].utf8)] {
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: secret))
            let jws = input + "." + TestJWS.base64URL(Data(mac))
            let verifier = try SignedPayloadVerifierTests.verifier()
            #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .unsupportedAlgorithm)
        }
    }

    /// Keys named in the header by other means than x5c (`jwk`, `jku`, `x5u`, `kid`) are never used.
    @Test func anEmbeddedJWKOrKeyURLIsIgnored() async throws {
        let (x5c, _) = try TestJWS.testChain()
        let attacker = P256.Signing.PrivateKey()
        let raw = attacker.publicKey.rawRepresentation
        let jwk: [String: Any] = [
            "kty": "EC", "crv": "P-256", "x": TestJWS.base64URL(raw.prefix(32)), "y": TestJWS.base64URL(raw.suffix(32)),
        ]
        let header: [String: Any] = [
            "alg": "ES256", "x5c": x5c, "jwk": jwk, "jku": "https://attacker.example/jwks.json",
            "x5u": "https://attacker.example/chain.pem", "kid": "attacker",
        ]
        let input =
            TestJWS.base64URL(try TestJWS.json(header)) + "."
            + TestJWS.base64URL(try TestJWS.json(TestJWS.transaction()))
        let signature = try attacker.signature(for: Data(input.utf8))
        let jws = input + "." + TestJWS.base64URL(signature.rawRepresentation)
        let verifier = try SignedPayloadVerifierTests.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidSignature)
    }

    /// Genuinely signed payloads meant for another app or environment.
    @Test func validPayloadsForAnotherBundleOrEnvironmentAreRejected() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let verifier = try SignedPayloadVerifierTests.verifier()
        let otherBundle = try TestJWS.make(payload: TestJWS.transaction(bundleId: "com.attacker"), x5c: x5c, key: key)
        await #expect {
            _ = try await verifier.verifyTransaction(otherBundle)
        } throws: { error in
            let error = error as? AppStoreServerAPIError
            return error?.code == .bundleIdMismatch && error?.description.contains("com.attacker") == true
        }
        var production = TestJWS.transaction()
        production["environment"] = "Production"
        let otherEnvironment = try TestJWS.make(payload: production, x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(otherEnvironment) } == .environmentMismatch)
        let renewal: [String: Any] = [
            "originalTransactionId": "12345", "environment": "Xcode", "signedDate": 1_700_000_000_000,
        ]
        let renewalJWS = try TestJWS.make(payload: renewal, x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyRenewalInfo(renewalJWS) } == .environmentMismatch)
        let notification: [String: Any] = [
            "notificationType": "REFUND", "notificationUUID": "n-2", "signedDate": 1_700_000_000_000,
            "data": ["bundleId": "com.attacker", "environment": "Sandbox"],
        ]
        let notificationJWS = try TestJWS.make(payload: notification, x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyNotification(notificationJWS) } == .bundleIdMismatch)
        // Missing bundle id and environment are mismatches too, not wildcards.
        var bare = TestJWS.transaction()
        bare["bundleId"] = nil
        let noBundle = try TestJWS.make(payload: bare, x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(noBundle) } == .bundleIdMismatch)
        bare = TestJWS.transaction()
        bare["environment"] = nil
        let noEnvironment = try TestJWS.make(payload: bare, x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(noEnvironment) } == .environmentMismatch)
    }

    /// A validated chain is cached; a forged header that reuses its leaf with another intermediate, or a payload
    /// re-signed under the cached header, still fails.
    @Test func theChainCacheCannotBeBorrowed() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let verifier = try SignedPayloadVerifierTests.verifier()
        let genuine = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key)
        _ = try await verifier.verifyTransaction(genuine)
        let forged = try SigningChain.generate()
        let borrowedLeaf = try TestJWS.make(
            payload: TestJWS.transaction(), x5c: [x5c[0], Data(forged.intermediateDER).base64EncodedString(), x5c[2]],
            key: forged.leafKey)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(borrowedLeaf) } == .invalidSignature)
        var parts = genuine.split(separator: ".").map(String.init)
        var payload = TestJWS.transaction()
        payload["price"] = 1
        parts[1] = TestJWS.base64URL(try TestJWS.json(payload))
        let input = parts[0] + "." + parts[1]
        parts[2] = TestJWS.base64URL(try forged.leafKey.signature(for: Data(input.utf8)).rawRepresentation)
        let resigned = parts.joined(separator: ".")
        #expect(await Self.code { _ = try await verifier.verifyTransaction(resigned) } == .invalidSignature)
    }

    static func base64(_ certificate: Certificate) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes).base64EncodedString()
    }
}
