import Foundation
import Reconciler
import Testing

@testable import StoreSimulator

/// Refund requests in a scenario of several apps per store: an even share per app, and the backend's facts that
/// `storesim init` writes for `storerecon import consumption`.
@Suite("Scenario refund requests and their facts")
struct RefundRequestScenarioTests {
    static let spec: ScenarioSpec = {
        let apps = (1...3).flatMap { index in
            [
                SimulatedApp(
                    id: "ios-\(index)", platform: .apple, storeId: "com.example.ios\(index)",
                    appAppleId: 1_000_000 + Int64(index)),
                SimulatedApp(id: "android-\(index)", platform: .google, storeId: "com.example.android\(index)"),
            ]
        }
        var spec = ScenarioSpec(
            seed: 39, anchorMillis: 1_800_000_000_000, subscriptions: 600, historyDays: 60, futureDays: 0,
            sandboxShare: 0, apps: apps)
        spec.consumptionRequests = 3 * 20 + 1
        spec.refundReviews = 3 * 20
        return spec
    }()

    @Test func everyAppleAppGetsItsShareOfTheRequests() throws {
        let scenario = try ScenarioGenerator(spec: Self.spec).generate()
        let perApp = Self.spec.apps.indices.filter { Self.spec.apps[$0].platform == .apple }.map { app in
            scenario.notifications[Scenario.notificationSlot(app: app, sandbox: false)]
                .filter { $0.kind == .consumptionRequest }.count
        }
        // 61 among three apps: the first takes the one left over.
        #expect(perApp == [21, 20, 20])
        let reviews = Self.spec.apps.indices.filter { Self.spec.apps[$0].platform == .google }.map { app in
            scenario.rtdnMessages(app: app).filter { $0.orderId != nil }.count
        }
        #expect(reviews == [20, 20, 20])
    }

    @Test func theFactsNameEveryRequestsPurchaseAndStorereconReadsThem() throws {
        let scenario = try ScenarioGenerator(spec: Self.spec).generate()
        let rows = ConsumptionFactsExport.rows(scenario)
        #expect(rows.count == 61 + 60)
        let header = ConsumptionFactsExport.header.split(separator: ",").map(String.init)
        let positions = try ConsumptionFactRow.positions(header)
        let parsed = try rows.enumerated().map { line, text in
            try ConsumptionFactRow(
                fields: text.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
                positions: positions, line: line + 2)
        }
        let apple = Set(parsed.filter { $0.platform == .apple }.map(\.purchaseId))
        let google = Set(parsed.filter { $0.platform == .google }.map(\.purchaseId))
        var requested: Set<String> = []
        for event in scenario.notifications.joined() where event.kind == .consumptionRequest {
            requested.insert(String(scenario.transactionId(plan: Int(event.plan), charge: Int(event.charge))))
        }
        var reviewed: Set<String> = []
        for app in Self.spec.apps.indices {
            for message in scenario.rtdnMessages(app: app) { if let id = message.orderId { reviewed.insert(id) } }
        }
        #expect(apple == requested)
        #expect(google == reviewed)
        let consented = parsed.allSatisfy { $0.facts.customerConsented }
        #expect(consented)
        // Both deliveries appear, and a delivered purchase's consumption is known.
        let delivered = parsed.filter { $0.facts.deliveryStatus == .delivered }
        #expect(delivered.count < parsed.count)
        #expect(delivered.allSatisfy { $0.facts.consumptionMilli != nil })
    }

    @Test func theConfigurationNamesStorereconsOwnSubscriptionWhenThereAreReviews() throws {
        let keys = try SimulatorKeys.generate(seed: 1)
        let yaml = StoreReconConfigWriter(
            spec: Self.spec, keys: keys, directory: URL(fileURLWithPath: "/tmp/x"), baseURL: "http://127.0.0.1:1",
            databaseURL: "postgresql:///x", financialReports: false
        ).yaml()
        #expect(yaml.contains(#"rtdnSubscription: "projects/storesim/subscriptions/android-2-rtdn""#))
        #expect(yaml.components(separatedBy: "pubsubBaseURL:").count == 4)
        var quiet = Self.spec
        quiet.refundReviews = 0
        let without = StoreReconConfigWriter(
            spec: quiet, keys: keys, directory: URL(fileURLWithPath: "/tmp/x"), baseURL: "http://127.0.0.1:1",
            databaseURL: "postgresql:///x", financialReports: false
        ).yaml()
        #expect(!without.contains("rtdnSubscription"))
    }
}
