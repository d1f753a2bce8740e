import Foundation
import Testing

@testable import StoreSimulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `orders.get` and `orders.batchget` as the discovery document describes them, checked against the scenario's
/// facts (regional unit price and tax, quantity) with a raw HTTP client.
@Suite("Google Orders API")
struct OrdersEndpointTests {
    func ordersURL(_ sim: StoreSimulator, _ package: String, ids: [String]) -> URL {
        var components = URLComponents(
            url: sim.googleAPIBaseURL.appendingPathComponent(
                "androidpublisher/v3/applications/\(package)/orders:batchGet"),
            resolvingAgainstBaseURL: false)!
        components.queryItems = ids.isEmpty ? nil : ids.map { URLQueryItem(name: "orderIds", value: $0) }
        return components.url!
    }

    /// Money as nanos: `units` is a string, `nanos` a number, zero fields left out.
    static func nanos(_ money: Any?) throws -> (Int64, String) {
        let object = try #require(money as? [String: Any])
        let units = try #require(Int64(object["units"] as? String ?? "0"))
        #expect(object["units"] == nil || object["units"] is String)
        let nanos = Int64(object["nanos"] as? Int ?? 0)
        return (units * 1_000_000_000 + nanos, try #require(object["currencyCode"] as? String))
    }

    /// Checks an order's partial refund events against the truth's parts; returns whether one is still pending.
    static func expectPartialEvents(
        _ partial: [[String: Any]], _ parts: [GroundTruth.GoogleVoid], fact: GroundTruth.GoogleVoid,
        of order: [String: Any], nowMillis: Int64
    ) throws -> Bool {
        var anyPending = false
        for (event, part) in zip(partial, parts.sorted { $0.voidedTimeMillis < $1.voidedTimeMillis }) {
            let details = try #require(event["refundDetails"] as? [String: Any])
            #expect(try Self.nanos(details["total"]).0 == fact.unitPriceNanos * Int64(part.voidedQuantity!))
            // Google's refund clock is not the voided list's: created 1 to 20 s after the void.
            let created = try #require(event["createTime"] as? String)
            let createdMillis = Int64(
                (try #require(Self.rfc3339(created))).timeIntervalSince1970 * 1000)
            #expect((part.voidedTimeMillis + 1000...part.voidedTimeMillis + 20_000).contains(createdMillis))
            let pending = part.processedMillis > nowMillis
            anyPending = anyPending || pending
            #expect(event["state"] as? String == (pending ? "PENDING" : "PROCESSED_SUCCESSFULLY"))
            if pending { #expect(order["state"] as? String == "PENDING_REFUND") }
        }
        return anyPending
    }

    /// Checks an order's full refund event against the truth; returns whether it states its own share (`false`: all
    /// that was refunded), when that can be told (some part is processed).
    static func expectFullRefund(
        _ history: [String: Any], _ rows: [GroundTruth.GoogleVoid], nowMillis: Int64, id: String
    ) throws -> Bool? {
        let fact = rows[0]
        let quantity = Int64(fact.orderQuantity)
        let parts = rows.filter { $0.voidedQuantity != nil }
        guard rows.contains(where: { $0.voidedQuantity == nil }) else {
            #expect(history["refundEvent"] == nil)
            return nil
        }
        let refunded = Int64(parts.reduce(0) { $0 + ($1.voidedQuantity ?? 0) })
        let event = try #require(history["refundEvent"] as? [String: Any], "\(id)")
        let details = try #require(event["refundDetails"] as? [String: Any])
        // Its own share (the units left), or everything refunded so far (the processed parts too): Google's
        // reference allows either reading, and the scenario uses both.
        let processed = Int64(
            parts.filter { $0.processedMillis <= nowMillis }.reduce(0) {
                $0 + ($1.voidedQuantity ?? 0)
            })
        let stated = try Self.nanos(details["total"]).0
        let own = quantity - refunded
        #expect([own, own + processed].map { fact.unitPriceNanos * $0 }.contains(stated))
        let units = stated == fact.unitPriceNanos * own ? own : own + processed
        #expect(try Self.nanos(details["tax"]).0 == fact.unitTaxNanos * units)
        return processed > 0 ? units == own : nil
    }

    @Test func batchGetAnswersEveryVoidedOrderWithItsRegionalAmountsAndRefunds() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(seed: 5, subscriptions: 600, refunds: 300)) { sim in
            let client = TestClient(sim)
            let bearer = try await client.googleAccessToken()
            let truth = sim.groundTruth()
            let voids = truth.googleVoids
            let package = try #require(voids.first?.packageName)
            let byOrder = Dictionary(grouping: voids.filter { $0.packageName == package }, by: \.orderId)
            let ids = Array(byOrder.keys.sorted().prefix(1000))
            #expect(ids.count > 50)
            let answer = try await client.send("GET", ordersURL(sim, package, ids: ids), bearer: bearer)
            #expect(answer.status == 200)
            let orders = try #require(try answer.json["orders"] as? [[String: Any]])
            #expect(orders.map { $0["orderId"] as? String ?? "" } == ids)
            var sawTax = false
            var sawPartial = false
            var sawPending = false
            var (sawOwnShare, sawCumulative) = (false, false)
            var currencies: Set<String> = []
            for order in orders {
                let id = try #require(order["orderId"] as? String)
                let rows = try #require(byOrder[id])
                let fact = rows[0]
                let quantity = Int64(fact.orderQuantity)
                let (total, currency) = try Self.nanos(order["total"])
                #expect(currency == fact.currency)
                currencies.insert(currency)
                #expect(total == fact.unitPriceNanos * quantity)
                #expect(try Self.nanos(order["tax"]).0 == fact.unitTaxNanos * quantity)
                if fact.unitTaxNanos > 0 { sawTax = true }
                #expect((order["buyerAddress"] as? [String: Any])?["buyerCountry"] as? String == fact.buyerCountry)
                let item = try #require((order["lineItems"] as? [[String: Any]])?.first)
                #expect(try Self.nanos(item["listingPrice"]).0 == fact.unitPriceNanos)
                let history = try #require(order["orderHistory"] as? [String: Any])
                let parts = rows.filter { $0.voidedQuantity != nil }
                let partial = history["partialRefundEvents"] as? [[String: Any]] ?? []
                #expect(partial.count == parts.count, "\(id)")
                if try Self.expectPartialEvents(partial, parts, fact: fact, of: order, nowMillis: truth.nowMillis) {
                    sawPending = true
                }
                sawPartial = sawPartial || !partial.isEmpty
                if let own = try Self.expectFullRefund(history, rows, nowMillis: truth.nowMillis, id: id) {
                    if own { sawOwnShare = true } else { sawCumulative = true }
                }
            }
            #expect(sawTax && sawPartial && currencies.count >= 3)
            #expect(sawOwnShare && sawCumulative)
            _ = sawPending
        }
    }

    @Test func wholeCallRulesAndTheMethodOverride() async throws {
        try await StoreSimulator.withRunning(TestKeys.options(seed: 5, subscriptions: 600, refunds: 300)) { sim in
            let client = TestClient(sim)
            let bearer = try await client.googleAccessToken()
            let voids = sim.groundTruth().googleVoids
            let package = try #require(voids.first?.packageName)
            let ids = Array(Set(voids.filter { $0.packageName == package }.map(\.orderId))).sorted()
            // One unknown id fails the whole call with 404.
            let unknown = try await client.send(
                "GET", ordersURL(sim, package, ids: Array(ids.prefix(3)) + ["GPA.0000-0000-0000-00000"]), bearer: bearer
            )
            #expect(unknown.status == 404)
            #expect((try unknown.json["error"] as? [String: Any])?["status"] as? String == "NOT_FOUND")
            // An order of another package too.
            if let other = voids.first(where: { $0.packageName != package }) {
                let foreign = try await client.send(
                    "GET", ordersURL(sim, package, ids: [ids[0], other.orderId]), bearer: bearer)
                #expect(foreign.status == 404)
            }
            // 1 ... 1000 distinct ids.
            #expect(try await client.send("GET", ordersURL(sim, package, ids: []), bearer: bearer).status == 400)
            #expect(
                try await client.send("GET", ordersURL(sim, package, ids: [ids[0], ids[0]]), bearer: bearer).status
                    == 400)
            let tooMany = (0...1000).map { "GPA.1\($0)" }
            let form = tooMany.map { "orderIds=\($0)" }.joined(separator: "&")
            var request = URLRequest(url: ordersURL(sim, package, ids: []))
            request.httpMethod = "POST"
            request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
            request.setValue("GET", forHTTPHeaderField: "X-HTTP-Method-Override")
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(form.utf8)
            let (_, refused) = try await client.session.data(for: request)
            #expect((refused as? HTTPURLResponse)?.statusCode == 400)
            // The POST override answers as the GET does.
            request.httpBody = Data(ids.prefix(5).map { "orderIds=\($0)" }.joined(separator: "&").utf8)
            let (body, response) = try await client.session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let orders = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["orders"] as? [[String: Any]]
            #expect(orders?.map { $0["orderId"] as? String ?? "" } == Array(ids.prefix(5)))
            // orders.get: one order, or 404.
            let single = try await client.send(
                "GET",
                sim.googleAPIBaseURL.appendingPathComponent(
                    "androidpublisher/v3/applications/\(package)/orders/\(ids[0])"),
                bearer: bearer)
            #expect(single.status == 200)
            #expect(try single.json["orderId"] as? String == ids[0])
            let missing = try await client.send(
                "GET",
                sim.googleAPIBaseURL.appendingPathComponent(
                    "androidpublisher/v3/applications/\(package)/orders/GPA.0000-0000-0000-00000"),
                bearer: bearer)
            #expect(missing.status == 404)
        }
    }

    @Test func ordersAndVoidedPurchasesShareTheOrdersBucket() async throws {
        var options = TestKeys.options(seed: 5, subscriptions: 300, refunds: 100)
        options.quotas.voidedPerMinute = 4
        options.quotas.voidedPerWindow = 100
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let bearer = try await client.googleAccessToken()
            let voids = sim.groundTruth().googleVoids
            let package = try #require(voids.first?.packageName)
            let id = try #require(voids.first?.orderId)
            for _ in 0..<2 {
                #expect(
                    try await client.send("GET", client.voidedURL([:], package: package), bearer: bearer).status == 200)
                #expect(try await client.send("GET", ordersURL(sim, package, ids: [id]), bearer: bearer).status == 200)
            }
            // Four calls of the two APIs spent the shared four.
            #expect(try await client.send("GET", ordersURL(sim, package, ids: [id]), bearer: bearer).status == 429)
            #expect(try await client.send("GET", client.voidedURL([:], package: package), bearer: bearer).status == 429)
        }
    }

    @Test func withoutTheFinancialPermissionTheAnswerIs403() async throws {
        var options = TestKeys.options(seed: 5, subscriptions: 300, refunds: 100)
        options.ordersPermissionDenied = true
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let bearer = try await client.googleAccessToken()
            let void = try #require(sim.groundTruth().googleVoids.first)
            let answer = try await client.send(
                "GET", ordersURL(sim, void.packageName, ids: [void.orderId]), bearer: bearer)
            #expect(answer.status == 403)
        }
    }

    static func rfc3339(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
