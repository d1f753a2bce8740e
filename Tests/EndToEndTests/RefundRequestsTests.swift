import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

/// `storerecon run refund-requests` and `import consumption`, the built binary against the simulator's Apple
/// endpoints on loopback and a real database.
@Suite("storerecon run refund-requests, end to end")
struct RefundRequestsTests {
    static func options() -> SimulatorOptions {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var spec = ScenarioSpec(
            seed: 39, anchorMillis: now, subscriptions: 80, oneTimePurchases: 60, refunds: 0, historyDays: 40,
            futureDays: 1, sandboxShare: 0)
        spec.consumptionRequests = 24
        var options = SimulatorOptions(scenario: spec)
        options.clock = .realTime(offsetMillis: 0)
        options.authUsesWallClock = true
        options.quotas.useWallClock = true
        return options
    }

    static let rules = """
            refundRequests:
              rules:
                - { when: { delivered: false }, prefer: grant }
                - { when: { consumedPercentAtLeast: 50 }, prefer: decline }
              default: grant_prorated

        """

    struct Request {
        var transactionId: String
        var originalId: String
        var type: String
        var familyShared: Bool
        var missed: Bool
    }

    func run(_ stores: SimulatedStores, _ arguments: [String]) async throws -> BuiltExecutable.Outcome {
        try await BuiltExecutable("storerecon").run(arguments + ["--config", stores.configPath])
    }

    func requests(_ connection: PostgresConnection) throws -> [Request] {
        try connection.query(
            """
            SELECT transaction_id, original_id, product_type, family_shared, deadline <= now() AS missed
            FROM refund_request ORDER BY transaction_id
            """
        ).map { row in
            Request(
                transactionId: try row.decode("transaction_id"), originalId: try row.decode("original_id"),
                type: try row.decode("product_type"), familyShared: try row.decode("family_shared"),
                missed: try row.decode("missed"))
        }
    }

    /// The body Apple must receive for the request at `index` of the facts written below, by hand.
    func expectedBody(_ index: Int, autoRenewable: Bool) -> String? {
        switch index % 4 {
        case 1:  // delivered, 75 % consumed: rules[1], decline
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":false}"#
                : #"{"consumptionPercentage":75000,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"DECLINE","sampleContentProvided":false}"#
        case 2:  // undelivered: rules[0], grant with 0 %
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#
                : #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","refundPreference":"GRANT_FULL","sampleContentProvided":true}"#
        case 3:  // delivered, nothing consumed: default grant_prorated; a full grant on a one-time purchase
            return autoRenewable
                ? #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#
                : #"{"consumptionPercentage":0,"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_FULL","sampleContentProvided":false}"#
        default:  // no consent: nothing sent
            return nil
        }
    }

    func factsCSV(_ requests: [Request]) -> String {
        var csv =
            "platform,purchase_id,customer_consented,delivery_status,consumption_percent,sample_content_provided,as_of\n"
        for (index, request) in requests.enumerated() {
            // Every other purchase is named by its original transaction id, as a backend keyed by subscription would.
            let id = index % 2 == 0 ? request.transactionId : request.originalId
            switch index % 4 {
            case 0: csv += "apple,\(id),false,delivered,10,false,2026-07-01T00:00:00Z\n"
            case 1: csv += "apple,\(id),true,delivered,75,false,2026-07-01T00:00:00Z\n"
            case 2: csv += "apple,\(id),true,undelivered_other,40.5,true,2026-07-01T00:00:00Z\n"
            default: csv += "apple,\(id),true,delivered,0,false,2026-07-01T00:00:00Z\n"
            }
        }
        return csv
    }

    @Test func everyAnswerableRequestIsAnsweredOnceWithTheExpectedBody() async throws {
        try await StoreSimulator.withRunning(Self.options()) { simulator in
            let stores = try SimulatedStores(simulator: simulator, databasePrefix: "refundrequests")
            let yaml = try String(contentsOfFile: stores.configPath, encoding: .utf8)
            try yaml.replacingOccurrences(of: "    platform: apple\n", with: "    platform: apple\n" + Self.rules)
                .write(toFile: stores.configPath, atomically: true, encoding: .utf8)
            let connection = try PostgresConnection(conninfo: stores.conninfo)
            defer { connection.close() }

            let found = try await expectFirstRunFindsRequestsAndSendsNothing(stores, connection, simulator)
            try await expectStatusAndMetricsCountWaitingAndMissed(stores, found)
            try await expectBadFactsFileWritesNothing(stores, connection, found)
            let facts = stores.directory.appendingPathComponent("facts.csv").path
            try factsCSV(found).write(toFile: facts, atomically: true, encoding: .utf8)
            let imported = try await run(stores, ["import", "consumption", facts])
            #expect(imported.status == 0, "\(imported.stderr)")

            let expectedCount = try await expectSecondRunAnswersEachRequestOnce(stores, simulator, found)
            try await expectThirdRunSendsNothingAndJoinsDecisions(stores, connection, simulator, expectedCount)
            try await expectReportAddsUpToOneRowPerRequest(stores, expectedCount)
        }
    }
}
