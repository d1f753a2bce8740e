import SwiftASN1
import X509

/// Apple's requirements on a signed-payload chain beyond RFC 5280: exactly leaf → intermediate → root, the
/// intermediate carrying OID 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1.
struct AppleSigningChainPolicy: VerifierPolicy {
    static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [Self.intermediateOID, Self.leafOID]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "the chain has \(chain.count) certificates, expected 3")
        }
        if let problem = Self.oidProblem(leaf: chain[0], intermediate: chain[1]) {
            return .failsToMeetPolicy(reason: problem)
        }
        return .meetsPolicy
    }

    /// What is wrong with the Apple OIDs of a leaf and intermediate, or `nil` when both carry theirs.
    static func oidProblem(leaf: Certificate, intermediate: Certificate) -> String? {
        if intermediate.extensions[oid: intermediateOID] == nil {
            return "the intermediate certificate lacks Apple's extension \(intermediateOID)"
        }
        if leaf.extensions[oid: leafOID] == nil {
            return "the leaf certificate lacks Apple's extension \(leafOID)"
        }
        return nil
    }
}
