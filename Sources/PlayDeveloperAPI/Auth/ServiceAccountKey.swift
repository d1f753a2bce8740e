import Foundation
import Logging
import StoreHTTP
import _CryptoExtras

/// A Google service-account key, read from the JSON key file the operator downloads from Google Cloud.
///
/// Only `client_email`, `private_key`, `private_key_id` and `token_uri` are used. The private key never leaves this
/// value: ``description`` names the account and key id only.
/// See [Using OAuth 2.0 for server to server applications](https://developers.google.com/identity/protocols/oauth2/service-account).
public struct ServiceAccountKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The token endpoint Google's key files name (used when the file has no `token_uri`).
    public static let defaultTokenURI = URL(string: "https://oauth2.googleapis.com/token")!

    /// `client_email`: the service account, the JWT's `iss`.
    public var clientEmail: String
    /// `private_key_id`: the JWT header's `kid`.
    public var privateKeyID: String
    /// `token_uri`: where the signed assertion is exchanged for an access token.
    public var tokenURI: URL
    /// Where the key came from (a file path), for error messages.
    public var source: String
    let privateKey: _RSA.Signing.PrivateKey

    /// Creates a key from its parts (tests, or keys held elsewhere than in a file).
    public init(clientEmail: String, privateKeyID: String, privateKeyPEM: String, tokenURI: URL, source: String) throws
    {
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
        self.source = source
        self.privateKey = try Self.parsePrivateKey(privateKeyPEM, source: source)
    }

    /// Parses the key file's JSON.
    /// - Parameters:
    ///   - json: the file's bytes.
    ///   - source: the file's path, for errors.
    /// - Throws: ``PlayAPIError`` (`.keyFile`) naming the file and what is wrong with it, never its content.
    public init(json: Data, source: String) throws {
        func fail(_ message: String) -> PlayAPIError { PlayAPIError(.keyFile, message, file: source) }
        guard let object = try? JSONSerialization.jsonObject(with: json), let fields = object as? [String: Any] else {
            throw fail("not a JSON object (expected a service-account key file downloaded from Google Cloud)")
        }
        if let type = fields["type"] as? String, type != "service_account" {
            throw fail("\"type\" is \(type.prefix(40).debugDescription), expected \"service_account\"")
        }
        func string(_ name: String) throws -> String {
            guard let value = fields[name] else { throw fail("missing field \"\(name)\"") }
            guard let text = value as? String, !text.isEmpty else {
                throw fail("field \"\(name)\" is not a non-empty string")
            }
            return text
        }
        let tokenURI: URL
        if fields["token_uri"] == nil {
            tokenURI = Self.defaultTokenURI
        } else {
            let text = try string("token_uri")
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host,
                scheme == "https" || (scheme == "http" && LoopbackHost.contains(host))
            else { throw fail("field \"token_uri\" is not an https URL (plain http only on loopback)") }
            tokenURI = url
        }
        try self.init(
            clientEmail: string("client_email"), privateKeyID: string("private_key_id"),
            privateKeyPEM: string("private_key"), tokenURI: tokenURI, source: source)
    }

    /// Reads and parses a key file, logging a warning when group or others may read it (0600 is advised).
    /// - Throws: ``PlayAPIError`` (`.keyFile`) when the file is missing, unreadable, not JSON, lacks a field, or
    ///   holds no RSA private key in PEM form.
    public static func load(fromFile path: String, logger: Logger? = nil) throws -> ServiceAccountKey {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PlayAPIError(.keyFile, "no such file", file: path)
        }
        guard !isDirectory.boolValue else { throw PlayAPIError(.keyFile, "is a directory, not a key file", file: path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PlayAPIError(.keyFile, "cannot be read (permissions?)", file: path)
        }
        if let warning = permissionWarning(forFile: path) {
            logger?.warning("\(warning)", metadata: ["file": "\(path)"])
        }
        return try ServiceAccountKey(json: data, source: path)
    }

    /// A warning when the file's mode lets group or others read or write it, else `nil`.
    public static func permissionWarning(forFile path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else { return nil }
        guard mode & 0o077 != 0 else { return nil }
        return "service-account key file \(path) has mode 0\(String(mode & 0o777, radix: 8)), "
            + "which lets other users read it; 0600 is advised (chmod 600 \(path))"
    }

    public var description: String { "service account \(clientEmail) (key id \(privateKeyID), from \(source))" }

    /// Hides the private key from `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["clientEmail": clientEmail, "privateKeyID": privateKeyID, "tokenURI": tokenURI])
    }

    private static func parsePrivateKey(_ pem: String, source: String) throws -> _RSA.Signing.PrivateKey {
        guard pem.contains("-----BEGIN") else {
            throw PlayAPIError(.keyFile, "field \"private_key\" is not PEM (no -----BEGIN line)", file: source)
        }
        do {
            return try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw PlayAPIError(
                .keyFile, "field \"private_key\" is not an RSA private key of 2048 bits or more in PEM form",
                file: source)
        }
    }
}
