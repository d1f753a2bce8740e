import Foundation
import Reconciler
import Testing

/// The documented example configuration must stay valid: the README points newcomers at it.
@Suite("examples/storerecon.yaml")
struct ExampleConfigurationTests {
    @Test func theExampleLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("examples/storerecon.yaml").path
        let configuration = try ConfigurationLoader(environment: ["APPLE_KEY_FILE": "/k.p8"]).load(path: path)
        #expect(configuration.apps.count == 2)
        #expect(configuration.products.count == 2)
        #expect(configuration.nightly.onLocked == .skip)
    }
}

extension ExampleConfigurationTests {
    /// Each section with a key nobody accepts: the loader's error lists the keys the section does accept.
    static let probes = [
        "database: { url: x }\nzzz: 1",
        "database: { url: x, zzz: 1 }",
        "database: { url: x }\napps: [{ id: a, platform: google, zzz: 1 }]",
        "database: { url: x }\nlimits: { a: { zzz: 1 } }",
        "database: { url: x }\nrecheck: { zzz: 1 }",
        "database: { url: x }\nsync: { zzz: 1 }",
        "database: { url: x }\nproducts: { p: { zzz: 1 } }",
        "database: { url: x }\nreports: { zzz: 1 }",
        "database: { url: x }\nstatus: { zzz: 1 }",
        "database: { url: x }\nnightly: { zzz: 1 }",
    ]

    /// The example says it lists every key the loader accepts: it does (a key may be shown in a comment).
    @Test func theExampleNamesEveryAcceptedKey() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = try String(
            contentsOf: root.appendingPathComponent("examples/storerecon.yaml"), encoding: .utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var missing: [String] = []
        for probe in Self.probes {
            let file = directory.appendingPathComponent("probe.yaml")
            try probe.write(to: file, atomically: true, encoding: .utf8)
            var message = ""
            do { _ = try ConfigurationLoader(environment: [:]).load(path: file.path) } catch { message = "\(error)" }
            let list = try #require(message.range(of: "expected one of: "), "\(probe): \(message)")
            let keys = message[list.upperBound...].prefix { $0 != ")" }.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(!keys.isEmpty, "\(probe): \(message)")
            missing += keys.filter { key in
                example.range(of: "(^|[^A-Za-z])\(key):", options: .regularExpression) == nil
            }
        }
        #expect(missing.isEmpty, "examples/storerecon.yaml does not show: \(missing)")
    }
}
