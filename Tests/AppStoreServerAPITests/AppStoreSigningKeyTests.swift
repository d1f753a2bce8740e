import AppStoreServerAPI
import Foundation
import Testing

@Suite struct AppStoreSigningKeyTests {
    let directory: URL = FileManager.default.temporaryDirectory
        .appendingPathComponent("appstore-key-tests-\(UUID().uuidString)")

    func write(_ text: String, mode: Int = 0o600) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8")
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        return url.path
    }

    func problem(_ path: String) -> AppStoreServerAPIError? {
        do {
            _ = try AppStoreSigningKey(privateKeyFile: path, keyId: "K", issuerId: "I", bundleId: "B")
            return nil
        } catch let error as AppStoreServerAPIError {
            return error
        } catch {
            return nil
        }
    }

    @Test func loadsApplesTestKeyWithoutWarningAt0600() throws {
        let pem = try AppleReference.text("certs/testSigningKey.p8")
        let key = try AppStoreSigningKey(
            privateKeyFile: try write(pem), keyId: "K", issuerId: "I", bundleId: "com.example")
        #expect(key.permissionWarning == nil)
        #expect(key.keyId == "K")
    }

    @Test func warnsWhenGroupOrOthersCanRead() throws {
        let pem = try AppleReference.text("certs/testSigningKey.p8")
        let path = try write(pem, mode: 0o644)
        let key = try AppStoreSigningKey(privateKeyFile: path, keyId: "K", issuerId: "I", bundleId: "com.example")
        let warning = try #require(key.permissionWarning)
        #expect(warning.contains(path))
        #expect(warning.contains("644"))
    }

    @Test func missingFile() throws {
        let path = directory.appendingPathComponent("nope.p8").path
        let error = try #require(problem(path))
        #expect(error.code == .privateKey)
        #expect(error.description.contains(path))
        #expect(error.description.contains("does not exist"))
    }

    @Test func notPEM() throws {
        let error = try #require(problem(try write("just some text")))
        #expect(error.code == .privateKey)
        #expect(error.description.contains("not PEM"))
    }

    @Test func notAP256Key() throws {
        // A PEM block that is not an EC P-256 key (an X.509 certificate), and a garbled key body.
        let certificate = try AppleReference.text("certs/testCA.pem")
        let garbled = "-----BEGIN PRIVATE KEY-----\nTUlHSEFnRUFNQk1HQnlxR1NNNDk=\n-----END PRIVATE KEY-----\n"
        for text in [certificate, garbled] {
            let error = try #require(problem(try write(text)))
            #expect(error.description.contains("not a P-256"))
            #expect(!error.description.contains("TUlHSE"))
        }
    }

    @Test func unreadableFile() throws {
        // Root reads anything, so an unreadable file can be simulated only as another user: use a directory instead.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let error = try #require(problem(directory.path))
        #expect(error.description.contains("directory"))
    }

    @Test func errorTextNeverHoldsTheKey() throws {
        let pem = try AppleReference.text("certs/testSigningKey.p8")
        let body = pem.split(separator: "\n")[1]
        let broken = pem.replacingOccurrences(of: "PRIVATE KEY-----\n", with: "PRIVATE KEY-----\nAAAA")
        let error = try #require(problem(try write(broken)))
        #expect(!error.description.contains(body))
    }
}
