import Foundation
import StoreSimulator
import Testing

extension RTDNNoticesTests {
    /// A configured subscription that Pub/Sub does not have is the configuration's fault: the run says which and
    /// where to create it, and exits 78 rather than 1.
    @Test func aSubscriptionThatDoesNotExistIsAConfigurationError() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let harness = try await Harness(simulator)
            defer { harness.connection.close() }
            let configured = simulator.rtdnSubscription(app: harness.android)
            let yaml = try String(contentsOfFile: harness.stores.configPath, encoding: .utf8)
            try yaml.replacingOccurrences(of: configured, with: "projects/acme/subscriptions/never-created")
                .write(toFile: harness.stores.configPath, atomically: true, encoding: .utf8)
            let outcome = try await harness.run(["run", "refund-requests"])
            #expect(outcome.status == 78, "\(outcome.stderr.suffix(2000))")
            #expect(outcome.stderr.contains("has no subscription projects/acme/subscriptions/never-created"))
        }
    }
}
