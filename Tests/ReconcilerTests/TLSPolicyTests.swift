import Foundation
import PlayDeveloperAPI
import Reconciler
import StoreHTTP
import Testing

/// TLS cannot be turned off for a real host: store URLs are https unless the host is loopback (the simulator),
/// there is no setting that disables certificate checks, and the transport rejects an untrusted certificate.
@Suite("TLS policy")
struct TLSPolicyTests {
    static func configuration(_ key: String, _ url: String) -> String {
        let apple = key == "tokenURL" ? "" : "    \(key): \(url)\n"
        let google = key == "sandboxBaseURL" ? "" : "    \(key): \(url)\n"
        return """
            apps:
              - id: ios
                platform: apple
                bundleId: com.a
                appAppleId: 1
                issuerId: i
                keyId: k
                privateKeyFile: /k.p8
                rootCertificates: [/root.cer]
            \(apple)  - id: android
                platform: google
                packageName: com.a
                serviceAccountFile: /sa.json
            \(google)
            """
    }

    static let notLoopback = [
        "http://127.0.0.1.attacker.example/", "http://127.attacker.example", "http://localhost.attacker.example",
        "http://10.0.0.1", "http://192.168.1.1:8080", "http://[::2]", "http://0x7f.0.0.1", "http://2130706433",
        "http://127.0.0.1.nip.io", "http://127.0.0.256", "http://attacker.example#@127.0.0.1",
        "http://127.0.0.1@attacker.example", "ftp://127.0.0.1", "HTTP://store.example",
    ]

    @Test(arguments: ["baseURL", "sandboxBaseURL", "tokenURL"])
    func plainHTTPToANonLoopbackHostIsAConfigurationError(key: String) throws {
        for url in Self.notLoopback {
            #expect {
                try ConfigurationLoader(environment: [:]).load(text: Self.configuration(key, url), source: "c.yaml")
            } throws: { error in
                guard let error = error as? ReconcilerError else { return false }
                return error.code == .configuration && error.message.contains(".\(key): expected an https URL")
            }
        }
        for url in [
            "http://127.0.0.1:8787", "http://127.1.2.3", "http://localhost:9", "http://[::1]:80",
            "https://api.storekit.apple.com", "https://127.0.0.1.attacker.example",
        ] {
            #expect(throws: Never.self, "\(url)") {
                try ConfigurationLoader(environment: [:]).load(text: Self.configuration(key, url), source: "c.yaml")
            }
        }
    }

    @Test func loopbackMeansTheLoopbackAddressesOnly() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.255.255.254", "::1", "[::1]"] {
            #expect(LoopbackHost.contains(host), "\(host)")
        }
        for host in [
            "127.0.0.1.example.com", "127.example", "127.0.0", "127.0.0.1.", "0127.0.0.1", "1.2.7.0",
            "localhost.example", "128.0.0.1", "::2", "", "127.0.0.-1", "１２７.0.0.1",
        ] {
            #expect(!LoopbackHost.contains(host), "\(host)")
        }
    }

    @Test(arguments: ["tlsVerify: false", "insecureSkipVerify: true", "verifyCertificates: false", "caBundle: /x"])
    func thereIsNoSettingThatTurnsCertificateChecksOff(line: String) throws {
        let text = Self.configuration("baseURL", "https://store.example").replacingOccurrences(
            of: "    packageName: com.a", with: "    packageName: com.a\n    \(line)")
        #expect {
            try ConfigurationLoader(environment: [:]).load(text: text, source: "c.yaml")
        } throws: { error in
            (error as? ReconcilerError)?.message.contains("unknown key") == true
        }
    }

    /// The transport checks certificates: a self-signed one on loopback is refused (no option exists to accept it).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func anUntrustedCertificateIsRefusedByTheTransport() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let generate = try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out",
            certificate, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
        ])
        generate.waitUntilExit()
        try #require(generate.terminationStatus == 0)
        let port = Int.random(in: 20_000...60_000)
        let server = try Self.openssl([
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www", "-quiet",
        ])
        defer { server.terminate() }
        let transport = CurlTransport()
        let request = HTTPRequest(url: URL(string: "https://127.0.0.1:\(port)/")!, timeout: 5)
        var answer: Result<HTTPResponse, TransportError>?
        // Wait for the server to listen: until then the connection is refused.
        for _ in 0..<100 {
            do {
                answer = .success(try await transport.send(request))
            } catch let error as TransportError {
                answer = .failure(error)
                if error.message.contains("connection refused") {
                    try await Task.sleep(for: .milliseconds(100))
                    continue
                }
            }
            break
        }
        switch answer {
        case .failure(let error):
            // libcurl names handshake failures in several ways; what matters is that nothing was accepted.
            #expect(!error.message.contains("connection refused"), "\(error)")
            // Not a fault that passes: never retried, and the job exits 78 (fix the host), not 75 (try later).
            #expect(error.code == .configuration && !error.isRetryable, "\(error)")
            #expect(ExitStatus.classify(error).code == ExitStatus.configuration)
        case .success(let response):
            Issue.record("a self-signed certificate was accepted (HTTP \(response.status))")
        case nil:
            Issue.record("no answer")
        }
    }

    /// A transport setting that cannot work is a setting whichever client meets it (exit 78); a garbled answer
    /// (libcurl's "unsupported protocol", as for a scheme it does not speak) stays a passing fault.
    @Test func aTransportSettingIsExit78AGarbledAnswerIsNot() async throws {
        let play = PlayAPIError(PlayAPIError.Code(transport: .configuration), "not trusted here")
        #expect(play.code == .transportSettings && !play.isRetryable)
        #expect(ExitStatus.classify(play).code == ExitStatus.configuration)
        let request = HTTPRequest(url: URL(string: "ftp://127.0.0.1/x")!, timeout: 5)
        let error = try await #require(throws: TransportError.self) { try await CurlTransport().send(request) }
        #expect(error.code == .invalidResponse && error.isRetryable, "\(error)")
    }

    static func openssl(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}
