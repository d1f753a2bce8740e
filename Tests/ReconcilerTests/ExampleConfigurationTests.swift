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
