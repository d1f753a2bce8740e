import Foundation
import Testing

@testable import StoreSimulator

@Suite("Fault switches, each observably doing its thing")
struct FaultTests {
    /// Runs a simulator with one fault at rate 1 on one endpoint.
    @discardableResult
    func withFault<T>(
        _ kind: FaultKind, on endpoint: SimulatorEndpoint, slowMillis: Int = 2000,
        _ body: (StoreSimulator, TestClient) async throws -> T
    ) async throws -> T {
        var options = TestKeys.options(refunds: 200)
        options.faults[endpoint] = FaultSettings(rates: [kind: 1], slowMillis: slowMillis)
        return try await StoreSimulator.withRunning(options) { sim in try await body(sim, TestClient(sim)) }
    }

    func voided(_ client: TestClient, _ query: [String: String] = ["type": "1"]) async throws -> TestClient.Answer {
        try await client.send("GET", client.voidedURL(query), bearer: try await client.googleAccessToken())
    }

    func refundHistory(_ sim: StoreSimulator, _ client: TestClient) async throws -> TestClient.Answer {
        let refund = try #require(sim.groundTruth().appleRefunds.first { $0.environment == "Production" })
        return try await client.send(
            "GET", client.appleURL("inApps/v2/refund/lookup/\(refund.transactionId)"), bearer: try client.appleBearer())
    }

    @Test("server errors: 5xx with the store's error body, and the call still counts as granted")
    func serverError() async throws {
        try await withFault(.serverError, on: .googleVoidedPurchases) { sim, client in
            let answer = try await voided(client)
            #expect([500, 503].contains(answer.status))
            #expect((try answer.json["error"] as? [String: Any])?["code"] as? Int == answer.status)
            #expect(sim.statistics().first { $0.endpoint == .googleVoidedPurchases }?.granted == 1)
        }
        try await withFault(.serverError, on: .appleRefundHistory) { sim, client in
            let answer = try await refundHistory(sim, client)
            #expect(answer.status == 500)
            #expect([5_000_000, 5_000_001].contains(try answer.json["errorCode"] as? Int))
        }
    }

    @Test("slow answers arrive after the configured delay")
    func slow() async throws {
        try await withFault(.slow, on: .googleVoidedPurchases, slowMillis: 300) { _, client in
            let token = try await client.googleAccessToken()
            let started = ContinuousClock.now
            let answer = try await client.send("GET", client.voidedURL([:]), bearer: token)
            #expect(answer.status == 200)
            #expect(started.duration(to: .now) >= .milliseconds(300))
        }
    }

    @Test("latency: every store answer arrives late, several are answered at once, the quota counts on arrival")
    func latency() async throws {
        var options = TestKeys.options(refunds: 200)
        options.latency = Latency(millis: 300, jitterMillis: 50)
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let started = ContinuousClock.now
            let token = try await client.googleAccessToken()
            #expect(started.duration(to: .now) >= .milliseconds(250), "the token endpoint answered at once")
            sim.resetStatistics()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await client.send("GET", client.voidedURL([:]), bearer: token).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == [200, 200, 200, 200])
            #expect(sim.mostInFlight(.googleVoidedPurchases) >= 2, "calls were answered one at a time")
            #expect(sim.statistics().first { $0.endpoint == .googleVoidedPurchases }?.granted == 4)
            sim.latency = .none
            #expect(Latency.parseMillis("1500ms") == 1500 && Latency.parseMillis("1.5s") == 1500)
            #expect(Latency.parseMillis("250") == 250 && Latency.parseMillis("fast") == nil)
        }
    }

    @Test("a dropped connection gives the client no answer at all")
    func dropConnection() async throws {
        try await withFault(.dropConnection, on: .googleVoidedPurchases) { _, client in
            await #expect(throws: (any Error).self) { try await voided(client) }
        }
    }

    @Test("a truncated body is shorter than its Content-Length, which the client notices")
    func truncatedBody() async throws {
        try await withFault(.truncatedBody, on: .appleRefundHistory) { sim, client in
            await #expect(throws: (any Error).self) { try await refundHistory(sim, client) }
        }
    }

    @Test("malformed JSON does not parse")
    func malformedJSON() async throws {
        try await withFault(.malformedJSON, on: .googleSubscriptionsV2) { sim, client in
            let truth = try #require(sim.subscriptionTruth().first { $0.platform == "google" })
            let answer = try await client.send(
                "GET", client.subscriptionURL(truth.storeId), bearer: try await client.googleAccessToken())
            #expect(answer.status == 200)
            #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: answer.body) }
        }
    }

    @Test("wrong field types: an object where an array belongs, a string where a boolean belongs")
    func wrongFieldTypes() async throws {
        try await withFault(.wrongFieldTypes, on: .googleSubscriptionsV2) { sim, client in
            let truth = try #require(sim.subscriptionTruth().first { $0.platform == "google" })
            let answer = try await client.send(
                "GET", client.subscriptionURL(truth.storeId), bearer: try await client.googleAccessToken())
            #expect(try answer.json["lineItems"] is [String: Any])
        }
        try await withFault(.wrongFieldTypes, on: .appleRefundHistory) { sim, client in
            let answer = try await refundHistory(sim, client)
            #expect(try answer.json["hasMore"] is String)
        }
        try await withFault(.wrongFieldTypes, on: .googleVoidedPurchases) { _, client in
            let rows = try #require(try await voided(client).json["voidedPurchases"] as? [[String: Any]])
            #expect(rows.allSatisfy { $0["voidedTimeMillis"] is [Any] })
        }
    }

    @Test("bad signatures do not verify; wrong bundle ids carry another app's id")
    func signedPayloadFaults() async throws {
        try await withFault(.badSignature, on: .appleRefundHistory) { sim, client in
            let signed = try #require(try await refundHistory(sim, client).json["signedTransactions"] as? [String])
            let verifier = try JWSVerifier(rootDER: sim.keys.chain.rootDER)
            await #expect(throws: (any Error).self) { try await verifier.verify(signed[0]) }
        }
        try await withFault(.wrongBundleId, on: .appleRefundHistory) { sim, client in
            let signed = try #require(try await refundHistory(sim, client).json["signedTransactions"] as? [String])
            let payload = try await JWSVerifier(rootDER: sim.keys.chain.rootDER).verify(signed[0])
            #expect(payload["bundleId"] as? String == "com.example.wrong")
        }
    }

    @Test("expired page tokens: Google answers 400, Apple 4000017")
    func expiredPageTokens() async throws {
        var options = TestKeys.options(seed: 5, subscriptions: 1500, refunds: 900)
        options.faults[.googleVoidedPurchases] = FaultSettings(rates: [.expiredPageToken: 1])
        options.faults[.appleNotificationHistory] = FaultSettings(rates: [.expiredPageToken: 1])
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let first = try await voided(client, ["type": "1", "maxResults": "1"])
            let token = try #require(
                ((try first.json["tokenPagination"] as? [String: Any])?["nextPageToken"]) as? String)
            #expect(try await voided(client, ["token": token]).status == 400)
            let now = sim.clock.nowMillis()
            let body = try JSONSerialization.data(withJSONObject: ["startDate": now - 90 * 86_400_000, "endDate": now])
            let url = client.appleURL("inApps/v1/notifications/history")
            let page = try await client.send("POST", url, bearer: try client.appleBearer(), body: body)
            let pagination = try #require(try page.json["paginationToken"] as? String)
            let next = client.appleURL("inApps/v1/notifications/history", query: ["paginationToken": pagination])
            let expired = try await client.send("POST", next, bearer: try client.appleBearer(), body: body)
            #expect(try expired.json["errorCode"] as? Int == 4_000_017)
        }
    }

    @Test("expired access tokens: 401 from Google and Apple although the token is good")
    func expiredAccessTokens() async throws {
        try await withFault(.expiredAccessToken, on: .googleVoidedPurchases) { _, client in
            let answer = try await voided(client)
            #expect(answer.status == 401)
        }
        try await withFault(.expiredAccessToken, on: .appleRefundHistory) { sim, client in
            let answer = try await refundHistory(sim, client)
            #expect(answer.status == 401)
        }
    }

    @Test("the fault schedule is the same for the same seed and rates")
    func deterministic() {
        let settings = [SimulatorEndpoint.googleVoidedPurchases: FaultSettings(rates: [.serverError: 0.3])]
        let first = FaultInjector(seed: 4, settings: settings)
        let second = FaultInjector(seed: 4, settings: settings)
        let a = (0..<200).map { _ in first.draw(for: .googleVoidedPurchases).faults }
        let b = (0..<200).map { _ in second.draw(for: .googleVoidedPurchases).faults }
        #expect(a == b)
        let hits = a.filter { !$0.isEmpty }.count
        #expect((30...90).contains(hits))
    }
}
