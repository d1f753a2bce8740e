import AppStoreServerAPI
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@Suite struct SignedPayloadVerifierTests {
    static func verifier(
        environment: Environment = .sandbox, appAppleId: Int64? = 1234, bundleId: String = "com.example",
        root: String = "certs/testCA.der"
    ) throws -> SignedPayloadVerifier {
        try SignedPayloadVerifier(
            rootCertificates: [try AppleReference.data(root)], bundleId: bundleId, appAppleId: appAppleId,
            environment: environment)
    }

    static func code(_ body: () async throws -> Void) async -> AppStoreServerAPIError.Code? {
        do {
            try await body()
            return nil
        } catch let error as AppStoreServerAPIError {
            return error.code
        } catch {
            return nil
        }
    }

    // MARK: Apple's signed test data

    @Test func applesTransactionInfoVerifiesAtItsSignedDate() async throws {
        let verifier = try Self.verifier()
        let verified = try await verifier.verifyTransaction(try AppleReference.text("mock_signed_data/transactionInfo"))
        #expect(verified.payload.bundleId == "com.example")
        #expect(verified.payload.environment == .sandbox)
        #expect(verified.payload.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
        let json = try #require(try JSONSerialization.jsonObject(with: verified.json) as? [String: Any])
        #expect(json["signedDate"] as? Int == 1_672_956_154_000)
    }

    @Test func applesRenewalInfoAndNotificationVerify() async throws {
        let verifier = try Self.verifier()
        let renewal = try await verifier.verifyRenewalInfo(try AppleReference.text("mock_signed_data/renewalInfo"))
        #expect(renewal.payload.environment == .sandbox)
        let notification = try await verifier.verifyNotification(
            try AppleReference.text("mock_signed_data/testNotification"))
        #expect(notification.payload.notificationType == .test)
        #expect(notification.payload.data?.appAppleId == 1234)
    }

    @Test func wrongBundleIdIsRejected() async throws {
        let verifier = try Self.verifier()
        let jws = try AppleReference.text("mock_signed_data/wrongBundleId")
        #expect(await Self.code { _ = try await verifier.verifyNotification(jws) } == .bundleIdMismatch)
    }

    @Test func missingX5CIsMalformed() async throws {
        let verifier = try Self.verifier()
        let jws = try AppleReference.text("mock_signed_data/missingX5CHeaderClaim")
        #expect(await Self.code { _ = try await verifier.verifyNotification(jws) } == .malformedJWS)
    }

    @Test func otherEnvironmentIsRejected() async throws {
        let verifier = try Self.verifier(environment: .production)
        let jws = try AppleReference.text("mock_signed_data/transactionInfo")
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .environmentMismatch)
    }

    // MARK: Minted with Apple's test keys

    @Test func mintedTransactionVerifiesAndDecodesRefundFields() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key)
        let verified = try await Self.verifier().verifyTransaction(jws)
        #expect(verified.payload.transactionId == "23456")
        #expect(verified.payload.revocationType == .refundFull)
        #expect(verified.payload.revocationReason == .appIssue)
        #expect(verified.payload.price == 10990)
    }

    @Test func tamperedPayloadFailsTheSignature() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key)
        var parts = jws.split(separator: ".").map(String.init)
        var payload = TestJWS.transaction()
        payload["price"] = 1
        parts[1] = TestJWS.base64URL(try TestJWS.json(payload))
        let tampered = parts.joined(separator: ".")
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(tampered) } == .invalidSignature)
        // Also when the chain is already cached.
        _ = try await verifier.verifyTransaction(jws)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(tampered) } == .invalidSignature)
    }

    @Test func signatureByAnotherKeyFails() async throws {
        let (x5c, _) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: P256.Signing.PrivateKey())
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidSignature)
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384"])
    func onlyES256IsAccepted(alg: String) async throws {
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, alg: alg, key: key)
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .unsupportedAlgorithm)
    }

    @Test func algorithmIsCheckedEvenWhenTheChainIsCached() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let verifier = try Self.verifier()
        _ = try await verifier.verifyTransaction(try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key))
        let none = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, alg: "none", key: key)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(none) } == .unsupportedAlgorithm)
    }

    @Test func wrongRootIsAChainFailure() async throws {
        // A root with the test CA's very name but another key: the x5c root as sent must not be trusted.
        let caKey = P256.Signing.PrivateKey()
        let testCA = try Certificate(derEncoded: Array(try AppleReference.data("certs/testCA.der")))
        let impostor = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: testCA.notValidBefore, notValidAfter: testCA.notValidAfter, issuer: testCA.subject,
            subject: testCA.subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            },
            issuerPrivateKey: .init(caKey))
        var serializer = DER.Serializer()
        try serializer.serialize(impostor)
        let verifier = try SignedPayloadVerifier(
            rootCertificates: [Data(serializer.serializedBytes)], bundleId: "com.example", appAppleId: nil,
            environment: .sandbox)
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key)
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidCertificateChain)
        let apple = try AppleReference.text("mock_signed_data/transactionInfo")
        #expect(await Self.code { _ = try await verifier.verifyTransaction(apple) } == .invalidCertificateChain)
    }

    @Test(arguments: [[1, 0, 2], [0, 2, 1], [2, 1, 0]])
    func swappedX5COrderIsAChainFailure(order: [Int]) async throws {
        let (x5c, key) = try TestJWS.testChain()
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: order.map { x5c[$0] }, key: key)
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .invalidCertificateChain)
    }

    @Test(arguments: [2, 4])
    func x5cMustHoldExactlyThreeCertificates(count: Int) async throws {
        let (x5c, key) = try TestJWS.testChain()
        let certificates = Array((x5c + x5c).prefix(count))
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: certificates, key: key)
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .malformedJWS)
    }

    @Test func leafWithoutAppleOIDIsRejected() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let leaf = try AppleReference.certificateBase64("certs/testInvalidOIDLeaf.pem")
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: [leaf, x5c[1], x5c[2]], key: key)
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .missingAppleOID)
    }

    @Test func intermediateWithoutAppleOIDIsRejected() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let leaf = try AppleReference.certificateBase64("certs/testInvalidIntermediateLeaf.pem")
        let intermediate = try AppleReference.certificateBase64("certs/testInvalidOIDIntermediate.pem")
        let jws = try TestJWS.make(payload: TestJWS.transaction(), x5c: [leaf, intermediate, x5c[2]], key: key)
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(jws) } == .missingAppleOID)
    }

    @Test func validityIsCheckedAtSignedDate() async throws {
        let (x5c, key) = try TestJWS.testChain()
        // The test chain is valid from January 2023 to January 2033.
        let expired = try TestJWS.make(payload: TestJWS.transaction(signedDate: 2_000_000_000_000), x5c: x5c, key: key)
        let early = try TestJWS.make(payload: TestJWS.transaction(signedDate: 1_600_000_000_000), x5c: x5c, key: key)
        let valid = try TestJWS.make(payload: TestJWS.transaction(signedDate: 1_700_000_000_000), x5c: x5c, key: key)

        let fresh = try Self.verifier()
        #expect(await Self.code { _ = try await fresh.verifyTransaction(expired) } == .certificateExpired)
        #expect(await Self.code { _ = try await fresh.verifyTransaction(early) } == .certificateNotYetValid)

        let cached = try Self.verifier()
        _ = try await cached.verifyTransaction(valid)
        #expect(await Self.code { _ = try await cached.verifyTransaction(expired) } == .certificateExpired)
        #expect(await Self.code { _ = try await cached.verifyTransaction(early) } == .certificateNotYetValid)
    }

    @Test func productionNotificationsMustCarryTheAppAppleId() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let payload: [String: Any] = [
            "notificationType": "REFUND", "notificationUUID": "n-1", "signedDate": 1_700_000_000_000,
            "data": ["bundleId": "com.example", "appAppleId": 999, "environment": "Production"],
        ]
        let jws = try TestJWS.make(payload: payload, x5c: x5c, key: key)
        let wrong = try Self.verifier(environment: .production, appAppleId: 1234)
        #expect(await Self.code { _ = try await wrong.verifyNotification(jws) } == .appAppleIdMismatch)
        let right = try Self.verifier(environment: .production, appAppleId: 999)
        #expect(try await right.verifyNotification(jws).payload.notificationType == .refund)
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "..", "a..c", "!!!.e30.AAAA"])
    func malformedCompactJWS(text: String) async throws {
        let verifier = try Self.verifier()
        #expect(await Self.code { _ = try await verifier.verifyTransaction(text) } == .malformedJWS)
    }

    @Test func payloadThatIsNotJSONIsInvalid() async throws {
        let (x5c, key) = try TestJWS.testChain()
        var parts = try TestJWS.make(payload: TestJWS.transaction(), x5c: x5c, key: key).split(separator: ".")
            .map(String.init)
        parts[1] = TestJWS.base64URL(Data("not json".utf8))
        let verifier = try Self.verifier()
        #expect(
            await Self.code { _ = try await verifier.verifyTransaction(parts.joined(separator: ".")) }
                == .invalidPayload)
    }

    @Test func chainsAreCachedByLeaf() async throws {
        let (x5c, key) = try TestJWS.testChain()
        let verifier = try Self.verifier()
        for index in 0..<5 {
            let jws = try TestJWS.make(
                payload: TestJWS.transaction(signedDate: 1_700_000_000_000 + Int64(index)), x5c: x5c, key: key)
            _ = try await verifier.verifyTransaction(jws)
        }
        #expect(verifier.cachedChainCount == 1)
    }

    // MARK: Turning verification off

    @Test func verificationCanBeOffOnlyForXcodeAndLocalTesting() throws {
        for environment in [Environment.production, .sandbox] {
            #expect(throws: AppStoreServerAPIError.self) {
                try SignedPayloadVerifier(
                    rootCertificates: [], bundleId: "b", appAppleId: 1, environment: environment,
                    verifiesSignatures: false)
            }
        }
        for environment in [Environment.xcode, .localTesting] {
            #expect(throws: Never.self) {
                try SignedPayloadVerifier(
                    rootCertificates: [], bundleId: "b", appAppleId: nil, environment: environment,
                    verifiesSignatures: false)
            }
        }
    }

    @Test func productionNeedsAnAppAppleIdAndARoot() throws {
        #expect(throws: AppStoreServerAPIError.self) {
            try SignedPayloadVerifier(
                rootCertificates: [try AppleReference.data("certs/testCA.der")], bundleId: "b", appAppleId: nil,
                environment: .production)
        }
        #expect(throws: AppStoreServerAPIError.self) {
            try SignedPayloadVerifier(rootCertificates: [], bundleId: "b", appAppleId: 1, environment: .production)
        }
    }

    @Test func xcodePayloadsDecodeWithFractionalMillisecondsRounded() async throws {
        let verifier = try SignedPayloadVerifier(
            rootCertificates: [], bundleId: "com.example.naturelab.backyardbirds.example", appAppleId: nil,
            environment: .xcode, verifiesSignatures: false)
        let transaction = try await verifier.verifyTransaction(
            try AppleReference.text("xcode/xcode-signed-transaction"))
        #expect(transaction.payload.purchaseDate == Date(timeIntervalSince1970: 1_697_679_936.050))
        #expect(transaction.payload.signedDate == Date(timeIntervalSince1970: 1_697_679_936.056))
        #expect(transaction.payload.productId == "pass.premium")
        let renewal = try await verifier.verifyRenewalInfo(try AppleReference.text("xcode/xcode-signed-renewal-info"))
        #expect(renewal.payload.signedDate == Date(timeIntervalSince1970: 1_697_679_936.711))
        #expect(renewal.payload.autoRenewStatus == .on)
    }

    @Test func rootCertificateFilesAreLoadedAndProblemsNamed() throws {
        let verifier = try SignedPayloadVerifier(
            rootCertificateFiles: [AppleReference.path("certs/testCA.der"), AppleReference.path("certs/testCA.pem")],
            bundleId: "com.example", appAppleId: nil, environment: .sandbox)
        #expect(verifier.bundleId == "com.example")
        let missing = AppleReference.path("certs/none.der")
        #expect {
            try SignedPayloadVerifier(
                rootCertificateFiles: [missing], bundleId: "b", appAppleId: nil, environment: .sandbox)
        } throws: { error in
            (error as? AppStoreServerAPIError)?.description.contains(missing) ?? false
        }
        #expect(throws: AppStoreServerAPIError.self) {
            try SignedPayloadVerifier(
                rootCertificateFiles: [AppleReference.path("certs/testLeaf.key")], bundleId: "b", appAppleId: nil,
                environment: .sandbox)
        }
    }
}
