import Foundation
import Testing

@testable import StoreSimulator

@Suite("Apple refund history, notification history, statuses and transaction history")
struct AppleEndpointTests {
    @Test("a customer without refunds gets an empty page and a revision that can be reused; a bad one is 4000005")
    func refundHistoryRevisions() async throws {
        var options = TestKeys.options(subscriptions: 50, refunds: 0)
        options.clock = .fixed(startMillis: options.scenario.anchorMillis)
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let bearer = try client.appleBearer()
            let truth = try #require(
                sim.subscriptionTruth().first { $0.platform == "apple" && $0.environment == "Production" })
            let url = client.appleURL("inApps/v2/refund/lookup/\(truth.storeId)")
            let first = try await client.send("GET", url, bearer: bearer)
            #expect(first.status == 200)
            let json = try first.json
            #expect((json["signedTransactions"] as? [String])?.isEmpty == true)
            #expect(json["hasMore"] as? Bool == false)
            let revision = try #require(json["revision"] as? String)
            let again = try await client.send(
                "GET", client.appleURL("inApps/v2/refund/lookup/\(truth.storeId)", query: ["revision": revision]),
                bearer: bearer)
            #expect(try again.json["revision"] as? String == revision)
            let invalid = try await client.send(
                "GET", client.appleURL("inApps/v2/refund/lookup/\(truth.storeId)", query: ["revision": "bogus"]),
                bearer: bearer)
            #expect(invalid.status == 400)
            #expect(try invalid.json["errorCode"] as? Int == 4_000_005)
        }
    }

    @Test("refund history pages 20 at a time, ascending by revocation date, each refund once")
    func refundHistoryPages() async throws {
        var options = TestKeys.options(seed: 17, subscriptions: 600, refunds: 300)
        options.scenario.maxRefundsPerPurchase = 60
        options.quotas.appleRefundHistoryPerSecond = 100_000
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let byCustomer = Dictionary(
                grouping: sim.groundTruth().appleRefunds.filter { $0.environment == "Production" },
                by: \.originalTransactionId)
            let (customer, refunds) = try #require(byCustomer.max { $0.value.count < $1.value.count })
            try #require(refunds.count > 20)
            var seen: [String] = []
            var revision: String?
            var pages = 0
            repeat {
                let query = revision.map { ["revision": $0] } ?? [:]
                let answer = try await client.send(
                    "GET", client.appleURL("inApps/v2/refund/lookup/\(customer)", query: query),
                    bearer: try client.appleBearer())
                let json = try answer.json
                let signed = try #require(json["signedTransactions"] as? [String])
                #expect(signed.count <= 20)
                for jws in signed { seen.append(try #require(try TestClient.payload(jws)["transactionId"] as? String)) }
                pages += 1
                revision = json["revision"] as? String
                if json["hasMore"] as? Bool != true { break }
            } while pages < 100
            let expected = refunds.sorted { $0.revocationDate < $1.revocationDate }.map(\.transactionId)
            #expect(seen == expected)
            #expect(pages == (refunds.count + 19) / 20)
        }
    }

    @Test("refunds appear in refund history as the clock reaches them, each once across revisions")
    func refundsAppearOverTime() async throws {
        var options = TestKeys.options(seed: 13, subscriptions: 2000, refunds: 1500)
        options.quotas.appleRefundHistoryPerSecond = 100_000
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let start = sim.clock.nowMillis()
            let future = sim.groundTruth()
            sim.clock.set(millis: start + 30 * 86_400_000)
            let all = sim.groundTruth().appleRefunds.filter { $0.environment == "Production" }
            let later = try #require(
                all.first { $0.revocationDate > start && $0.revocationDate < start + 30 * 86_400_000 })
            #expect(!future.appleRefunds.contains { $0.transactionId == later.transactionId })
            sim.clock.set(millis: start)
            let url = client.appleURL("inApps/v2/refund/lookup/\(later.originalTransactionId)")
            let before = try await client.send("GET", url, bearer: try client.appleBearer())
            let beforeJSON = try before.json
            let revision = try #require(beforeJSON["revision"] as? String)
            let seen = (beforeJSON["signedTransactions"] as? [String] ?? []).count
            sim.clock.set(millis: later.revocationDate)
            let next = try await client.send(
                "GET",
                client.appleURL(
                    "inApps/v2/refund/lookup/\(later.originalTransactionId)", query: ["revision": revision]),
                bearer: try client.appleBearer())
            let signed = try #require(try next.json["signedTransactions"] as? [String])
            #expect(signed.count == 1)
            #expect(try TestClient.payload(signed[0])["transactionId"] as? String == later.transactionId)
            #expect(seen == 0)
        }
    }

    @Test("unknown, malformed, other-environment and future transactions")
    func lookups() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(subscriptions: 400)) { sim in
            let client = TestClient(sim)
            let bearer = try client.appleBearer()
            let unknown = try await client.send(
                "GET", client.appleURL("inApps/v2/refund/lookup/1999999999999999"), bearer: bearer)
            #expect(unknown.status == 404)
            #expect(try unknown.json["errorCode"] as? Int == 4_040_010)
            #expect(try unknown.json["errorMessage"] as? String == "Transaction id not found.")
            let malformed = try await client.send("GET", client.appleURL("inApps/v2/refund/lookup/abc"), bearer: bearer)
            #expect(try malformed.json["errorCode"] as? Int == 4_000_006)
            let sandbox = try #require(sim.subscriptionTruth().first { $0.environment == "Sandbox" })
            let inProduction = try await client.send(
                "GET", client.appleURL("inApps/v1/subscriptions/\(sandbox.storeId)"), bearer: bearer)
            #expect(inProduction.status == 404)
            let inSandbox = try await client.send(
                "GET", client.appleURL("inApps/v1/subscriptions/\(sandbox.storeId)", sandbox: true), bearer: bearer)
            #expect(inSandbox.status == 200)
            #expect(try inSandbox.json["environment"] as? String == "Sandbox")
        }
    }

    @Test("Get All Subscription Statuses reports the true status with signed transaction and renewal info")
    func statuses() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(subscriptions: 600)) { sim in
            let client = TestClient(sim)
            let bearer = try client.appleBearer()
            for truth in sim.subscriptionTruth().filter({ $0.platform == "apple" && $0.environment == "Production" })
                .prefix(40)
            {
                let answer = try await client.send(
                    "GET", client.appleURL("inApps/v1/subscriptions/\(truth.storeId)"), bearer: bearer)
                let json = try answer.json
                #expect(json["bundleId"] as? String == "com.example.demo")
                #expect(json["appAppleId"] as? Int == 1_234_567_890)
                let group = try #require((json["data"] as? [[String: Any]])?.first)
                let last = try #require((group["lastTransactions"] as? [[String: Any]])?.first)
                #expect(last["status"] as? Int == truth.appleStatus)
                #expect(last["originalTransactionId"] as? String == truth.storeId)
                let transaction = try TestClient.payload(try #require(last["signedTransactionInfo"] as? String))
                #expect(transaction["transactionId"] as? String == truth.latestTransaction)
                let renewal = try TestClient.payload(try #require(last["signedRenewalInfo"] as? String))
                #expect(renewal["autoRenewStatus"] as? Int == (truth.autoRenew ? 1 : 0))
                #expect(renewal["bundleId"] == nil)
            }
        }
    }

    @Test("notification history: 180-day limit, filters, 20 a page, every notification once")
    func notificationHistory() async throws {
        var options = TestKeys.options(seed: 4, subscriptions: 600, refunds: 300)
        options.quotas.appleOtherPerSecond = 100_000
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let now = sim.clock.nowMillis()
            let url = client.appleURL("inApps/v1/notifications/history")
            func post(_ body: [String: Any], token: String? = nil) async throws -> TestClient.Answer {
                let target =
                    token.map { client.appleURL("inApps/v1/notifications/history", query: ["paginationToken": $0]) }
                    ?? url
                return try await client.send(
                    "POST", target, bearer: try client.appleBearer(),
                    body: try JSONSerialization.data(withJSONObject: body), contentType: "application/json")
            }
            let tooOld = try await post(["startDate": now - 181 * 86_400_000, "endDate": now])
            #expect(try tooOld.json["errorCode"] as? Int == 4_000_012)
            let both = try await post([
                "startDate": now - 86_400_000, "endDate": now, "notificationType": "REFUND", "transactionId": "1",
            ])
            #expect(try both.json["errorCode"] as? Int == 4_000_019)
            let body: [String: Any] = [
                "startDate": now - 170 * 86_400_000, "endDate": now, "notificationType": "REFUND",
            ]
            var uuids: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let answer = try await post(body, token: token)
                let json = try answer.json
                let items = try #require(json["notificationHistory"] as? [[String: Any]])
                #expect(items.count <= 20)
                for item in items {
                    let payload = try TestClient.payload(try #require(item["signedPayload"] as? String))
                    #expect(payload["notificationType"] as? String == "REFUND")
                    #expect(payload["version"] as? String == "2.0")
                    let data = try #require(payload["data"] as? [String: Any])
                    #expect(data["bundleId"] as? String == "com.example.demo")
                    let transaction = try TestClient.payload(try #require(data["signedTransactionInfo"] as? String))
                    #expect(transaction["revocationDate"] != nil)
                    uuids.append(try #require(payload["notificationUUID"] as? String))
                    #expect((item["sendAttempts"] as? [[String: Any]])?.isEmpty == false)
                }
                token = json["paginationToken"] as? String
                #expect((json["hasMore"] as? Bool) == (token != nil))
                pages += 1
            } while token != nil
            let expected = sim.groundTruth().appleRefunds.filter {
                $0.environment == "Production" && $0.revocationType != "FAMILY_REVOKE"
                    && $0.revocationDate >= now - 170 * 86_400_000
            }
            #expect(uuids.count == expected.count)
            #expect(Set(uuids).count == uuids.count)
            #expect(pages > 1)
            let reused = try await post(["startDate": now - 100 * 86_400_000, "endDate": now], token: token ?? "bad")
            #expect(try reused.json["errorCode"] as? Int == 4_000_014)
        }
    }

    @Test("transaction history lists the customer's transactions with revisions")
    func transactionHistory() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(subscriptions: 600)) { sim in
            let client = TestClient(sim)
            let truth = try #require(
                sim.subscriptionTruth().first {
                    $0.platform == "apple" && $0.environment == "Production"
                        && (Int64($0.latestTransaction ?? "") ?? 0) - (Int64($0.storeId) ?? 0) >= 25
                })
            var ids: [String] = []
            var revision: String?
            repeat {
                let query = revision.map { ["revision": $0] } ?? [:]
                let answer = try await client.send(
                    "GET", client.appleURL("inApps/v2/history/\(truth.storeId)", query: query),
                    bearer: try client.appleBearer())
                let json = try answer.json
                for signed in json["signedTransactions"] as? [String] ?? [] {
                    ids.append(try #require(try TestClient.payload(signed)["transactionId"] as? String))
                }
                revision = (json["hasMore"] as? Bool) == true ? json["revision"] as? String : nil
            } while revision != nil
            #expect(ids.first == truth.storeId)
            #expect(ids.last == truth.latestTransaction)
            #expect(Set(ids).count == ids.count)
        }
    }
}
