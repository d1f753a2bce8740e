import Foundation
import Testing
import _CryptoExtras

@testable import PlayDeveloperAPI

@Suite struct ServiceAccountKeyTests {
    @Test func readsTheFieldsItNeeds() throws {
        let key = try TestKeys.key()
        #expect(key.clientEmail == TestKeys.clientEmail)
        #expect(key.privateKeyID == TestKeys.privateKeyID)
        #expect(key.tokenURI.absoluteString == TestKeys.tokenURI)
        #expect(key.privateKey.publicKey.derRepresentation == TestKeys.publicKey.derRepresentation)
    }

    @Test func acceptsPKCS1PEMToo() throws {
        let json = try TestKeys.keyFileJSON(overriding: ["private_key": TestKeys.privateKey.pemRepresentation])
        #expect(try ServiceAccountKey(json: json, source: "k.json").privateKeyID == TestKeys.privateKeyID)
    }

    @Test func missingTokenURIDefaultsToGoogle() throws {
        let key = try ServiceAccountKey(json: TestKeys.keyFileJSON(dropping: "token_uri"), source: "k.json")
        #expect(key.tokenURI == ServiceAccountKey.defaultTokenURI)
    }

    /// The signed assertion and the access token it buys never travel in clear text to a real host: the key file's
    /// `token_uri` gets the configuration's rule (https, plain http only on loopback).
    @Test func plainHTTPTokenURIToARealHostIsRefused() throws {
        for uri in ["http://oauth2.googleapis.com/token", "http://127.0.0.1.attacker.example/token", "http://10.0.0.1"]
        {
            let error = try #require(throws: PlayAPIError.self) {
                try ServiceAccountKey(json: TestKeys.keyFileJSON(overriding: ["token_uri": uri]), source: "k.json")
            }
            #expect(error.code == .keyFile && error.message.contains("\"token_uri\" is not an https URL"))
        }
        for uri in ["https://oauth2.googleapis.com/token", "http://127.0.0.1:8787/token", "http://localhost/token"] {
            let key = try ServiceAccountKey(
                json: TestKeys.keyFileJSON(overriding: ["token_uri": uri]), source: "k.json")
            #expect(key.tokenURI.absoluteString == uri)
        }
    }

    @Test(arguments: ["client_email", "private_key", "private_key_id"])
    func missingFieldIsNamed(field: String) throws {
        let error = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey(json: TestKeys.keyFileJSON(dropping: field), source: "/etc/play.json")
        }
        #expect(error.code == .keyFile)
        #expect(error.file == "/etc/play.json")
        #expect(error.message.contains("\"\(field)\""))
    }

    @Test func notJSON() throws {
        let error = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey(json: Data("-----BEGIN PRIVATE KEY-----".utf8), source: "k.pem")
        }
        #expect(error.code == .keyFile && error.message.contains("not a JSON object"))
    }

    @Test func wrongFileType() throws {
        let error = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey(json: TestKeys.keyFileJSON(overriding: ["type": "authorized_user"]), source: "k.json")
        }
        #expect(error.message.contains("service_account"))
    }

    @Test func keyThatIsNotPEM() throws {
        let error = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey(json: TestKeys.keyFileJSON(overriding: ["private_key": "c2VjcmV0"]), source: "k.json")
        }
        #expect(error.message.contains("not PEM"))
        #expect(!error.description.contains("c2VjcmV0"))
    }

    @Test func keyThatIsNotRSA() throws {
        let pem =
            "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n"
        let error = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey(json: TestKeys.keyFileJSON(overriding: ["private_key": pem]), source: "k.json")
        }
        #expect(error.code == .keyFile && error.message.contains("not an RSA private key"))
        #expect(!error.description.contains("MIGHAgEA"))
    }

    @Test func descriptionAndDumpHideTheKey() throws {
        let key = try TestKeys.key()
        var dumped = ""
        dump(key, to: &dumped)
        let secretLine = TestKeys.privateKey.pkcs8PEMRepresentation.split(separator: "\n")[1]
        for text in [key.description, String(describing: key), String(reflecting: key), dumped] {
            #expect(!text.contains(secretLine))
            #expect(!text.contains("PRIVATE KEY"))
        }
        #expect(key.description.contains(TestKeys.clientEmail))
    }

    @Test func loadFromFileErrorsNameTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("play-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let missing = directory.appendingPathComponent("missing.json").path
        let missingError = try #require(throws: PlayAPIError.self) { try ServiceAccountKey.load(fromFile: missing) }
        #expect(missingError.file == missing && missingError.message == "no such file")
        #expect(missingError.description.contains(missing))

        let directoryError = try #require(throws: PlayAPIError.self) {
            try ServiceAccountKey.load(fromFile: directory.path)
        }
        #expect(directoryError.message.contains("directory"))

        let good = directory.appendingPathComponent("key.json").path
        #expect(FileManager.default.createFile(atPath: good, contents: try TestKeys.keyFileJSON()))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: good)
        #expect(ServiceAccountKey.permissionWarning(forFile: good) == nil)
        #expect(try ServiceAccountKey.load(fromFile: good).source == good)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: good)
        let warning = try #require(ServiceAccountKey.permissionWarning(forFile: good))
        #expect(warning.contains("0644") && warning.contains("0600"))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: good)
        #expect(ServiceAccountKey.permissionWarning(forFile: good) != nil)
    }
}
