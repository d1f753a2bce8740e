import Crypto
import Foundation
import SwiftASN1
import X509

/// The test certificate chain that signs Apple payloads: a self-signed root, an intermediate carrying Apple's
/// marker extension 1.2.840.113635.100.6.2.1, and a leaf carrying 1.2.840.113635.100.6.11.1 (both non-critical,
/// with an ASN.1 NULL value as in Apple's certificates). storerecon trusts the root by configuration.
public struct SigningChain: Sendable {
    /// Apple's marker OID on the intermediate (Apple Worldwide Developer Relations intermediate).
    public static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]
    /// Apple's marker OID on the leaf (App Store receipt signing).
    public static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]

    /// The root certificate, DER.
    public let rootDER: [UInt8]
    /// The intermediate certificate, DER.
    public let intermediateDER: [UInt8]
    /// The leaf certificate, DER.
    public let leafDER: [UInt8]
    /// The leaf's signing key.
    public let leafKey: P256.Signing.PrivateKey

    /// Generates a new chain, valid from 2000 to 2099 so that payload dates anywhere in a scenario verify.
    /// - Throws: when swift-certificates cannot build a certificate.
    public static func generate() throws -> SigningChain {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let notBefore = Date(timeIntervalSince1970: 946_684_800)
        let notAfter = Date(timeIntervalSince1970: 4_102_444_800)
        let rootName = try name("storesim Test Root CA")
        let intermediateName = try name("storesim Test Intermediate")
        let leafName = try name("storesim Test Signing Leaf")
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: rootPublic, notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: rootName, subject: rootName,
            extensions: Certificate.Extensions([
                Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true),
                Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
                Certificate.Extension(SubjectKeyIdentifier(hash: rootPublic), critical: false),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: intermediatePublic,
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: rootName, subject: intermediateName,
            extensions: Certificate.Extensions([
                Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: 0), critical: true),
                Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
                Certificate.Extension(SubjectKeyIdentifier(hash: intermediatePublic), critical: false),
                Certificate.Extension(
                    AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier),
                    critical: false),
                Certificate.Extension(oid: intermediateMarker, critical: false, value: [0x05, 0x00]),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafPublic, notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: intermediateName, subject: leafName,
            extensions: Certificate.Extensions([
                Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true),
                Certificate.Extension(KeyUsage(digitalSignature: true), critical: true),
                Certificate.Extension(
                    AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier),
                    critical: false),
                Certificate.Extension(oid: leafMarker, critical: false, value: [0x05, 0x00]),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey))
        return SigningChain(
            rootDER: try derBytes(root), intermediateDER: try derBytes(intermediate), leafDER: try derBytes(leaf),
            leafKey: leafKey)
    }

    /// A certificate name of storesim's, in the US.
    private static func name(_ commonName: String) throws -> DistinguishedName {
        try DistinguishedName {
            CommonName(commonName)
            OrganizationName("storesim")
            CountryName("US")
        }
    }

    /// Loads a chain written by ``write(to:)``.
    /// - Throws: ``SimulatorError`` when a file is missing or unreadable.
    public static func load(from directory: URL) throws -> SigningChain {
        func read(_ name: String) throws -> [UInt8] {
            do {
                return Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            } catch {
                throw SimulatorError(.files, "cannot read \(name) in \(directory.path)")
            }
        }
        let keyPEM = String(decoding: try read("leaf-key.pem"), as: UTF8.self)
        do {
            return SigningChain(
                rootDER: try read("root.der"), intermediateDER: try read("intermediate.der"),
                leafDER: try read("leaf.der"), leafKey: try P256.Signing.PrivateKey(pemRepresentation: keyPEM))
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.files, "leaf-key.pem in \(directory.path) is not a P-256 key")
        }
    }

    /// Writes the chain (root, intermediate, leaf as DER, the leaf key as PKCS#8 PEM) into a directory.
    /// - Throws: when a file cannot be written.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(rootDER).write(to: directory.appendingPathComponent("root.der"))
        try Data(intermediateDER).write(to: directory.appendingPathComponent("intermediate.der"))
        try Data(leafDER).write(to: directory.appendingPathComponent("leaf.der"))
        try Data(leafKey.pemRepresentation.utf8).write(to: directory.appendingPathComponent("leaf-key.pem"))
    }

    private static func derBytes(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
