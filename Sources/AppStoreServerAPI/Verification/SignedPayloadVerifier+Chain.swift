import Crypto
import Foundation
@_spi(FixedExpiryValidationTime) import X509

extension SignedPayloadVerifier {
    /// How many validated chains are cached (for tests and diagnostics).
    public var cachedChainCount: Int { cache.count }

    /// The leaf key of a JWS whose header and chain are valid at `date`: from the cache when the chain was seen
    /// before, otherwise after full validation.
    func leafKey(of jws: CompactJWS, at date: Date) async throws -> P256.Signing.PublicKey {
        if let entry = cache.entry(forHeader: jws.header) {
            try entry.checkValidity(at: date)
            return entry.leafKey
        }
        let header: JWSHeader
        do {
            guard let bytes = Base64URL.decode(jws.header) else { throw CancellationError() }
            header = try JSONDecoder().decode(JWSHeader.self, from: Data(bytes))
        } catch {
            throw AppStoreServerAPIError(code: .malformedJWS, message: "the header is not base64url JSON")
        }
        guard header.alg == "ES256" else {
            throw AppStoreServerAPIError(
                code: .unsupportedAlgorithm, message: "the header's alg is \(header.alg ?? "(none)"), expected ES256")
        }
        guard let x5c = header.x5c, x5c.count == 3 else {
            throw AppStoreServerAPIError(
                code: .malformedJWS,
                message: "the header's x5c holds \(header.x5c?.count ?? 0) certificates, expected exactly 3")
        }
        var ders: [[UInt8]] = []
        for (index, text) in x5c.enumerated() {
            guard let der = Base64URL.decode(text.utf8) else {
                throw AppStoreServerAPIError(code: .malformedJWS, message: "x5c certificate \(index + 1) is not base64")
            }
            ders.append(der)
        }
        let entry = try await cache.entry(forLeaf: ders[0], header: jws.header) {
            var certificates: [Certificate] = []
            for (index, der) in ders.enumerated() {
                do {
                    certificates.append(try Certificate(derEncoded: der))
                } catch {
                    throw AppStoreServerAPIError(
                        code: .malformedJWS, message: "x5c certificate \(index + 1) is not a DER X.509 certificate")
                }
            }
            return try await validateChain(leaf: certificates[0], intermediate: certificates[1], at: date)
        }
        try entry.checkValidity(at: date)
        return entry.leafKey
    }

    /// Builds and checks leaf → intermediate → configured root with swift-certificates at `date`.
    private func validateChain(leaf: Certificate, intermediate: Certificate, at date: Date) async throws
        -> ChainCache.Entry
    {
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: date)
            AppleSigningChainPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        switch result {
        case .validCertificate(let chain):
            let certificates = Array(chain)
            guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
                throw AppStoreServerAPIError(
                    code: .invalidCertificateChain, message: "the leaf certificate's key is not a P-256 key")
            }
            return ChainCache.Entry(
                leafKey: key,
                notBefore: certificates.map(\.notValidBefore).max() ?? leaf.notValidBefore,
                notAfter: certificates.map(\.notValidAfter).min() ?? leaf.notValidAfter)
        case .couldNotValidate(let failures):
            throw Self.diagnose(failures, leaf: leaf, intermediate: intermediate, at: date)
        }
    }

    /// Turns the verifier's failures into one error with the most specific code: a chain of the expected shape
    /// (the JWS's leaf and intermediate, then a configured root) that fails only on time or on Apple's OIDs says so;
    /// anything else is a chain failure.
    private static func diagnose(
        _ failures: [CertificateValidationResult.PolicyFailure], leaf: Certificate, intermediate: Certificate,
        at date: Date
    ) -> AppStoreServerAPIError {
        let expected = failures.first { failure in
            failure.chain.count == 3 && failure.chain[0] == leaf && failure.chain[1] == intermediate
        }
        guard let expected else {
            return AppStoreServerAPIError(
                code: .invalidCertificateChain,
                message: "the x5c leaf and intermediate do not chain to a configured root certificate")
        }
        let names = ["leaf", "intermediate", "root"]
        for (index, certificate) in expected.chain.enumerated() {
            if date < certificate.notValidBefore {
                return AppStoreServerAPIError(
                    code: .certificateNotYetValid,
                    message: "the \(names[index]) certificate is valid only from \(certificate.notValidBefore), "
                        + "the payload was signed \(date)")
            }
            if date > certificate.notValidAfter {
                return AppStoreServerAPIError(
                    code: .certificateExpired,
                    message: "the \(names[index]) certificate expired \(certificate.notValidAfter), "
                        + "the payload was signed \(date)")
            }
        }
        if let problem = AppleSigningChainPolicy.oidProblem(leaf: leaf, intermediate: intermediate) {
            return AppStoreServerAPIError(code: .missingAppleOID, message: problem)
        }
        return AppStoreServerAPIError(
            code: .invalidCertificateChain,
            message: "the certificate chain fails policy: \(expected.policyFailureReason)")
    }
}
