import Foundation
import Testing

@testable import StoreSimulator

@Suite("Google voided purchases: windows, paging and filters")
struct VoidedPurchasesTests {
    struct Row: Hashable {
        var orderId: String
        var voidedTime: String
        var quantity: Int?
    }

    /// Pages through a window and returns every row, in order.
    func page(
        _ client: TestClient, token: String, query: [String: String]
    ) async throws -> (rows: [Row], pages: Int) {
        var rows: [Row] = []
        var pages = 0
        var next: String?
        repeat {
            var parameters = query
            if let next {
                parameters = ["token": next, "maxResults": query["maxResults"] ?? "1000"]
            }
            let answer = try await client.send("GET", client.voidedURL(parameters), bearer: token)
            try #require(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let json = try answer.json
            let list = json["voidedPurchases"] as? [[String: Any]] ?? []
            if json["voidedPurchases"] != nil { #expect(!list.isEmpty, "the array is absent when empty") }
            for item in list {
                #expect(item["kind"] as? String == "androidpublisher#voidedPurchase")
                #expect(item["purchaseTimeMillis"] is String && item["voidedTimeMillis"] is String)
                rows.append(
                    Row(
                        orderId: try #require(item["orderId"] as? String),
                        voidedTime: try #require(item["voidedTimeMillis"] as? String),
                        quantity: item["voidedQuantity"] as? Int))
            }
            next = (json["tokenPagination"] as? [String: Any])?["nextPageToken"] as? String
            pages += 1
        } while next != nil && pages < 10_000
        return (rows, pages)
    }

    @Test("every voided row of a random window comes back exactly once, oldest recorded first")
    func pagingIsComplete() async throws {
        var options = TestKeys.options(seed: 5, subscriptions: 1500, refunds: 900)
        options.scenario.futureDays = 0
        options.quotas.voidedPerWindow = 100_000
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let now = sim.clock.nowMillis()
            let truth = sim.groundTruth().googleVoids.filter(\.recorded)
            var random = SplitMix64(seed: 77)
            var sawRows = false
            for round in 0..<12 {
                let start = now - 30 * 86_400_000 + random.int(in: 0...(20 * 86_400_000))
                let end = random.chance(0.3) ? now : min(now, start + random.int(in: 0...(15 * 86_400_000)))
                let type = Int(random.below(2))
                let partial = random.chance(0.5)
                let maxResults = 1 + Int(random.below(9))
                let query = [
                    "startTime": String(start), "endTime": String(end), "type": String(type),
                    "includeQuantityBasedPartialRefund": String(partial), "maxResults": String(maxResults),
                ]
                let (rows, pages) = try await page(client, token: token, query: query)
                let expected = truth.filter {
                    $0.recordedTimeMillis >= start && $0.recordedTimeMillis <= end && (type == 1 || !$0.isSubscription)
                        && (partial || $0.voidedQuantity == nil)
                }.map { Row(orderId: $0.orderId, voidedTime: String($0.voidedTimeMillis), quantity: $0.voidedQuantity) }
                #expect(rows == expected, "round \(round)")
                #expect(Set(rows).count == rows.count, "no row twice")
                #expect(pages == max(1, (expected.count + maxResults - 1) / maxResults), "round \(round)")
                sawRows = sawRows || !rows.isEmpty
            }
            #expect(sawRows)
            #expect(truth.contains { $0.voidedQuantity != nil }, "the scenario has partial refunds")
            #expect(truth.contains { $0.recordedTimeMillis > $0.voidedTimeMillis + 86_400_000 }, "and late voids")
        }
    }

    @Test("a page token ignores the times sent with it; new voids after the window do not disturb it")
    func tokenIgnoresTimes() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(seed: 5, subscriptions: 1500, refunds: 900)) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let first = try await client.send("GET", client.voidedURL(["type": "1", "maxResults": "2"]), bearer: token)
            let next = try #require(
                ((try first.json["tokenPagination"] as? [String: Any])?["nextPageToken"]) as? String)
            sim.clock.advance(millis: 5 * 86_400_000)
            let later = try await client.googleAccessToken()
            let withTimes = try await client.send(
                "GET", client.voidedURL(["token": next, "maxResults": "2", "startTime": "0", "endTime": "1"]),
                bearer: later)
            let plain = try await client.send(
                "GET", client.voidedURL(["token": next, "maxResults": "2"]), bearer: later)
            #expect(withTimes.status == 200)
            #expect(withTimes.body == plain.body)
            let tampered = try await client.send(
                "GET", client.voidedURL(["token": "x" + next, "maxResults": "2"]), bearer: later)
            #expect(tampered.status == 400)
        }
    }

    @Test("the 30-day and end-after-now rules answer 400; maxResults caps at 1000")
    func windowRules() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let now = sim.clock.nowMillis()
            let old = try await client.send(
                "GET", client.voidedURL(["startTime": String(now - 30 * 86_400_000 - 1)]), bearer: token)
            #expect(old.status == 400)
            #expect((try old.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
            let edge = try await client.send(
                "GET", client.voidedURL(["startTime": String(now - 30 * 86_400_000)]), bearer: token)
            #expect(edge.status == 200)
            let future = try await client.send("GET", client.voidedURL(["endTime": String(now + 1)]), bearer: token)
            #expect(future.status == 400)
            let bad = try await client.send("GET", client.voidedURL(["startTime": "yesterday"]), bearer: token)
            #expect(bad.status == 400)
        }
    }

    @Test("with endTime clamped to now, a window that starts after now is empty; start after end is still 400")
    func clampedWindowAfterNow() async throws {
        var options = TestKeys.options()
        options.futureEndTime = .clamp
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let now = sim.clock.nowMillis()
            let ahead = try await client.send(
                "GET", client.voidedURL(["startTime": String(now + 5000), "endTime": String(now + 9000)]),
                bearer: token)
            #expect(ahead.status == 200)
            #expect((try ahead.json["voidedPurchases"] as? [Any])?.isEmpty ?? true)
            #expect(try ahead.json["tokenPagination"] == nil)
            let reversed = try await client.send(
                "GET", client.voidedURL(["startTime": String(now - 5000), "endTime": String(now - 9000)]),
                bearer: token)
            #expect(reversed.status == 400)
        }
    }

    @Test("voidedSource and voidedReason can be sent as strings")
    func enumsAsStrings() async throws {
        var options = TestKeys.options(seed: 5, subscriptions: 1500, refunds: 900)
        options.voidedEnumEncoding = .strings
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let answer = try await client.send("GET", client.voidedURL(["type": "1"]), bearer: token)
            let rows = try #require(try answer.json["voidedPurchases"] as? [[String: Any]])
            #expect(rows.allSatisfy { $0["voidedSource"] is String && $0["voidedReason"] is String })
        }
    }
}
