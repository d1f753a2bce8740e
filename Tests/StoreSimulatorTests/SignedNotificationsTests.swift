import Foundation
import Testing

@testable import StoreSimulator

/// A notification is signed once and served as stored, as Apple's history serves what it sent: the stored payload
/// says what a fresh signature's says and verifies against the chain; a spoiled payload and the REFUND ending a refund
/// request (it shows what the answer left) are never stored.
@Suite("Signed notifications")
struct SignedNotificationsTests {
    static func state() throws -> SimulatorState {
        let options = TestKeys.options(seed: 23, subscriptions: 60)
        let scenario = try ScenarioGenerator(spec: options.scenario).generate()
        return SimulatorState(options: options, scenario: scenario, keys: try #require(TestKeys.shared))
    }

    static func parts(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The claims of a JWS (unverified) and, for a notification, the claims of its signed transaction.
    static func claims(_ jws: String) throws -> (outer: [String: Any], transaction: String) {
        let payload = try #require(Base64URL.decode(Substring(parts(jws)[1])))
        let outer = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        let data = try #require(outer["data"] as? [String: Any])
        let transaction = try #require(data["signedTransactionInfo"] as? String)
        return (outer, parts(transaction)[1])
    }

    @Test func aNotificationIsSignedOnceAndItsStoredPayloadVerifiesAsAFreshOne() async throws {
        let state = try Self.state()
        let event = try #require(state.scenario.notifications.first { !$0.isEmpty }?.first)
        let first = ApplePayloads(state: state, spoilers: .init([])).signedNotification(event)
        let again = ApplePayloads(state: state, spoilers: .init([])).signedNotification(event)
        // ECDSA draws a new nonce per signature: the same string twice is the stored one.
        #expect(again == first)
        #expect(state.signedNotifications.count == 1)
        let fresh = ApplePayloads(state: try Self.state(), spoilers: .init([])).signedNotification(event)
        #expect(fresh != first)
        // The same notification apart from the signatures' nonces: its claims, and its transaction's.
        let (stored, storedTransaction) = try Self.claims(again)
        let (signed, signedTransaction) = try Self.claims(fresh)
        #expect(storedTransaction == signedTransaction)
        for name in ["notificationType", "notificationUUID", "version"] {
            #expect(stored[name] as? String == signed[name] as? String)
        }
        #expect(stored["signedDate"] as? Int64 == signed["signedDate"] as? Int64)
        let verifier = try JWSVerifier(rootDER: state.keys.chain.rootDER)
        let claims = try await verifier.verify(again)
        #expect(claims["notificationType"] as? String == event.kind.name)
        #expect(claims["signedDate"] as? Int64 == event.millis)
    }

    @Test func spoiledPayloadsAndTheRefundEndingARequestAreSignedEachTime() async throws {
        let state = try Self.state()
        let event = try #require(state.scenario.notifications.first { !$0.isEmpty }?.first)
        let spoiled = ApplePayloads(state: state, spoilers: .init([.badSignature]))
        #expect(spoiled.signedNotification(event) != spoiled.signedNotification(event))
        let wrongBundle = ApplePayloads(state: state, spoilers: .init([.wrongBundleId])).signedNotification(event)
        let verifier = try JWSVerifier(rootDER: state.keys.chain.rootDER)
        let claims = try await verifier.verify(wrongBundle)
        #expect((claims["data"] as? [String: Any])?["bundleId"] as? String == "com.example.wrong")
        #expect(state.signedNotifications.count == 0)
        // A REFUND the scenario does not hold: the end of a refund request, decided by its answer.
        let refunded = Set(state.scenario.refunds.map { "\($0.plan) \($0.charge)" })
        let plan = try #require(state.scenario.plans.indices.first { !refunded.contains("\($0) 0") })
        let outcome = NotificationEvent(
            millis: state.now - 1000, plan: Int32(plan), charge: 0, kind: .refund, subtype: .none)
        let payloads = ApplePayloads(state: state, spoilers: .init([]))
        #expect(payloads.signedNotification(outcome) != payloads.signedNotification(outcome))
        #expect(state.signedNotifications.count == 0)
        #expect(payloads.signedNotification(event) == payloads.signedNotification(event))
        #expect(state.signedNotifications.count == 1)
    }
}
