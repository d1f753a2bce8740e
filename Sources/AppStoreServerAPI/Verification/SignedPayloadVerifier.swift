import Crypto
import Foundation
import StoreHTTP
import X509

/// Verifies and decodes the JWS payloads the App Store signs: transactions, renewal info and notifications.
///
/// A payload is accepted only when its header's `alg` is ES256; its `x5c` holds exactly three certificates; the leaf
/// and intermediate chain to one of the *configured* roots (the `x5c` root as sent is never trusted) with Apple's OIDs
/// and RFC 5280 basic constraints, all valid at the payload's `signedDate`; the ES256 signature verifies with the leaf's
/// key; and the bundle ID, environment and (for production notifications) app Apple ID are the configured ones. Each
/// failure throws an ``AppStoreServerAPIError`` with its own code.
///
/// Validated chains are cached by the leaf certificate, so after the first payload of a chain each verification costs
/// one signature check and one JSON decode. The verifier is a value that can be shared across tasks.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwstransaction)
public struct SignedPayloadVerifier: Sendable {
    /// The bundle ID payloads must carry.
    public let bundleId: String
    /// The app Apple ID production notifications must carry.
    public let appAppleId: Int64?
    /// The environment payloads must come from.
    public let environment: Environment
    /// Whether signatures and chains are checked (always, except for Xcode and local-testing payloads on request).
    public let verifiesSignatures: Bool

    let roots: [Certificate]
    let now: @Sendable () -> Date
    let cache: ChainCache
    /// One decoder for every payload (it is never configured after creation) rather than one per payload.
    static let decoder = JSONDecoder()

    /// Creates a verifier.
    /// - Parameters:
    ///   - rootCertificates: the trusted roots, DER or PEM (Apple Root CA - G3 in production).
    ///   - bundleId: the app's bundle ID.
    ///   - appAppleId: the app's Apple ID; required in production.
    ///   - environment: the environment payloads must come from.
    ///   - verifiesSignatures: `false` skips signature and chain checks; allowed only for `Xcode` and `LocalTesting`.
    ///   - now: the clock, used only for payloads without a `signedDate`.
    ///   - sharesValidatedChains: validated chains are cached with every other verifier of the process that shares
    ///     this option and trusts the same roots (the apps of one run), rather than for this verifier alone.
    /// - Throws: ``AppStoreServerAPIError`` `configuration` for an unusable root, a missing app Apple ID in
    ///   production, or verification turned off outside Xcode and local testing.
    public init(
        rootCertificates: [Data], bundleId: String, appAppleId: Int64?, environment: Environment,
        verifiesSignatures: Bool = true, now: @escaping @Sendable () -> Date = { Date() },
        sharesValidatedChains: Bool = false
    ) throws {
        guard verifiesSignatures || environment == .xcode || environment == .localTesting else {
            throw AppStoreServerAPIError(
                code: .configuration,
                message: "signature verification can be turned off only for the Xcode and LocalTesting environments")
        }
        if environment == .production && appAppleId == nil {
            throw AppStoreServerAPIError(
                code: .configuration, message: "the app Apple ID is required to verify production payloads")
        }
        var roots: [Certificate] = []
        for (index, data) in rootCertificates.enumerated() {
            roots.append(try Self.certificate(from: data, name: "root certificate \(index + 1)"))
        }
        if verifiesSignatures && roots.isEmpty {
            throw AppStoreServerAPIError(code: .configuration, message: "no root certificate is configured")
        }
        self.roots = roots
        cache = sharesValidatedChains ? ChainCache.shared(trusting: roots) : ChainCache()
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.verifiesSignatures = verifiesSignatures
        self.now = now
    }

    /// Creates a verifier with roots read from files (DER `.cer` as Apple publishes them, or PEM).
    /// - Parameter sharesValidatedChains: as in ``init(rootCertificates:bundleId:appAppleId:environment:verifiesSignatures:now:sharesValidatedChains:)``.
    /// - Throws: ``AppStoreServerAPIError`` `configuration` naming a file that is missing or not a certificate.
    public init(
        rootCertificateFiles: [String], bundleId: String, appAppleId: Int64?, environment: Environment,
        verifiesSignatures: Bool = true, sharesValidatedChains: Bool = false
    ) throws {
        var roots: [Data] = []
        for path in rootCertificateFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw AppStoreServerAPIError(
                    code: .configuration, message: "root certificate file \(path): missing or not readable")
            }
            _ = try Self.certificate(from: data, name: "root certificate file \(path)")
            roots.append(data)
        }
        try self.init(
            rootCertificates: roots, bundleId: bundleId, appAppleId: appAppleId, environment: environment,
            verifiesSignatures: verifiesSignatures, sharesValidatedChains: sharesValidatedChains)
    }

    /// Verifies a signed transaction (`signedTransactions[]`, `signedTransactionInfo`).
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwstransaction)
    /// - Throws: ``AppStoreServerAPIError`` whose code says which check failed.
    public func verifyTransaction(_ jws: String) async throws -> VerifiedTransaction {
        try await naming(.transaction, jws) {
            let verified = try await verify(jws, as: JWSTransactionDecodedPayload.self)
            try checkBundleId(verified.payload.bundleId)
            try checkEnvironment(verified.payload.environment)
            return verified
        }
    }

    /// Verifies signed renewal info (`signedRenewalInfo`). It carries no bundle ID, so only the environment is checked.
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfo)
    /// - Throws: ``AppStoreServerAPIError`` whose code says which check failed.
    public func verifyRenewalInfo(_ jws: String) async throws -> VerifiedRenewalInfo {
        try await naming(.renewalInfo, jws) {
            let verified = try await verify(jws, as: JWSRenewalInfoDecodedPayload.self)
            try checkEnvironment(verified.payload.environment)
            return verified
        }
    }

    /// Verifies a notification (`signedPayload` of a notification or of a notification-history item). The
    /// transaction and renewal info inside it are JWS of their own: verify them with the other two methods.
    ///
    /// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/signedpayload)
    /// - Throws: ``AppStoreServerAPIError`` whose code says which check failed.
    public func verifyNotification(_ jws: String) async throws -> VerifiedNotification {
        try await naming(.notification, jws) { try await verifiedNotification(jws) }
    }

    private func verifiedNotification(_ jws: String) async throws -> VerifiedNotification {
        let verified = try await verify(jws, as: ResponseBodyV2DecodedPayload.self)
        let payload = verified.payload
        try checkBundleId(payload.data?.bundleId ?? payload.summary?.bundleId)
        if environment == .production {
            let received = payload.data?.appAppleId ?? payload.summary?.appAppleId
            guard received == appAppleId else {
                throw AppStoreServerAPIError(
                    code: .appAppleIdMismatch,
                    message: "the notification is for app Apple ID \(received.map(String.init) ?? "(none)"), "
                        + "expected \(appAppleId.map(String.init) ?? "(none)")")
            }
        }
        try checkEnvironment(payload.data?.environment ?? payload.summary?.environment)
        return verified
    }

    /// Decodes a payload once, then (unless verification is off) checks chain and signature.
    func verify<Content: SignedPayloadContent>(_ jws: String, as type: Content.Type) async throws
        -> VerifiedPayload<Content>
    {
        let parts = try CompactJWS(jws)
        guard let payloadBytes = Base64URL.decode(parts.payload) else {
            throw AppStoreServerAPIError(code: .malformedJWS, message: "the payload is not base64url")
        }
        let json = Data(payloadBytes)
        let content: Content
        do {
            content = try Self.decoder.decode(Content.self, from: json)
        } catch {
            let detail = (error as? DecodingError).map { ": " + DecodingError.describe($0).message } ?? ""
            throw AppStoreServerAPIError(code: .invalidPayload, message: "the payload is not a JSON object\(detail)")
        }
        if verifiesSignatures {
            let leafKey = try await leafKey(of: parts, at: content.signedDate ?? now())
            guard let signatureBytes = Base64URL.decode(parts.signature), signatureBytes.count == 64,
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
            else {
                throw AppStoreServerAPIError(
                    code: .invalidSignature, message: "the signature is not a 64-byte ES256 (r||s) signature")
            }
            guard leafKey.isValidSignature(signature, for: parts.signingInput) else {
                throw AppStoreServerAPIError(
                    code: .invalidSignature, message: "the ES256 signature does not match the leaf certificate's key")
            }
        }
        return VerifiedPayload(payload: content, json: json)
    }

    private func checkBundleId(_ received: String?) throws {
        guard received == bundleId else {
            throw AppStoreServerAPIError(
                code: .bundleIdMismatch,
                message: "the payload is for bundle ID \(received ?? "(none)"), expected \(bundleId)")
        }
    }

    private func checkEnvironment(_ received: Environment?) throws {
        guard received == environment else {
            throw AppStoreServerAPIError(
                code: .environmentMismatch,
                message: "the payload is from environment \(received?.rawValue ?? "(none)"), expected \(environment)")
        }
    }

    /// Parses one certificate from DER or PEM.
    static func certificate(from data: Data, name: String) throws -> Certificate {
        do {
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
                return try Certificate(pemEncoded: text)
            }
            return try Certificate(derEncoded: Array(data))
        } catch {
            throw AppStoreServerAPIError(code: .configuration, message: "\(name) is not an X.509 certificate")
        }
    }
}
