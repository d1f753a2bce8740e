import Foundation
import Testing

@testable import StoreSimulator

@Suite("Google and Apple quotas, over real HTTP")
struct QuotaTests {
    @Test("the 30th voided call inside 30 s is granted, the 31st refused, and one 30 s later granted again")
    func rollingWindowIsExact() async throws {
        try await StoreSimulator.withRunning(TestKeys.options()) { sim in
            let client = TestClient(sim)
            let token = try await client.googleAccessToken()
            let url = client.voidedURL(["maxResults": "1"])
            let start = sim.clock.nowMillis()
            for call in 1...30 {
                sim.clock.set(millis: start + Int64(call) * 900)  // 30 calls within 27 s
                #expect(try await client.send("GET", url, bearer: token).status == 200, "call \(call)")
            }
            sim.clock.set(millis: start + 30 * 900 + 100)
            let refused = try await client.send("GET", url, bearer: token)
            #expect(refused.status == 429)
            let error = try #require(try refused.json["error"] as? [String: Any])
            #expect(error["status"] as? String == "RESOURCE_EXHAUSTED")
            // The first grant (at start + 900) leaves the window at start + 30 900.
            sim.clock.set(millis: start + 900 + 30_000 - 1)
            #expect(try await client.send("GET", url, bearer: token).status == 429)
            sim.clock.set(millis: start + 900 + 30_000)
            #expect(try await client.send("GET", url, bearer: token).status == 200)
            let stats = try #require(sim.statistics().first { $0.endpoint == .googleVoidedPurchases })
            #expect(stats.granted == 31)
            #expect(stats.refused == 2)
            #expect(stats.maxInAny30Seconds == 30)
        }
    }

    /// Runs `body` against a simulator allowing two voided-purchases calls per window, with a client, its Google
    /// token and a voided-purchases URL.
    func withTwoVoidedCallsPerWindow(
        _ body: (StoreSimulator, TestClient, String, URL) async throws -> Void
    ) async throws {
        var options = TestKeys.options()
        options.quotas.voidedPerWindow = 2
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            try await body(sim, client, try await client.googleAccessToken(), client.voidedURL(["maxResults": "1"]))
        }
    }

    @Test("/admin/stats gives each endpoint's first and last grant on the quota clock; a refused call moves neither")
    func firstAndLastGrant() async throws {
        try await withTwoVoidedCallsPerWindow { sim, client, token, url in
            let statsURL = sim.adminURL.appendingPathComponent("stats")
            func voided() async throws -> [String: Any]? {
                let entries = try await client.send("GET", statsURL).json["endpoints"] as? [[String: Any]]
                return entries?.first { $0["endpoint"] as? String == "googleVoidedPurchases" }
            }
            #expect(try await voided()?["firstGrantMillis"] == nil)
            let start = sim.clock.nowMillis()
            sim.clock.set(millis: start + 1_000)
            #expect(try await client.send("GET", url, bearer: token).status == 200)
            sim.clock.set(millis: start + 4_500)
            #expect(try await client.send("GET", url, bearer: token).status == 200)
            sim.clock.set(millis: start + 7_000)
            #expect(try await client.send("GET", url, bearer: token).status == 429)
            let entry = try #require(try await voided())
            #expect(entry["granted"] as? Int == 2)
            #expect((entry["firstGrantMillis"] as? NSNumber)?.int64Value == start + 1_000)
            #expect((entry["lastGrantMillis"] as? NSNumber)?.int64Value == start + 4_500)
            let stats = try #require(sim.statistics().first { $0.endpoint == .googleVoidedPurchases })
            #expect(stats.firstGrantMillis == start + 1_000)
            #expect(stats.lastGrantMillis == start + 4_500)
        }
    }

    @Test("/admin/arrivals lists when each call let through arrived, per app; a refused call is not listed")
    func arrivalsPerApp() async throws {
        try await withTwoVoidedCallsPerWindow { sim, client, token, url in
            let start = sim.clock.nowMillis()
            for offset in [1_000, 1_250, 1_500] as [Int64] {
                sim.clock.set(millis: start + offset)
                _ = try await client.send("GET", url, bearer: token)
            }
            var arrivalsURL = URLComponents(
                url: sim.adminURL.appendingPathComponent("arrivals"), resolvingAgainstBaseURL: false)!
            arrivalsURL.queryItems = [URLQueryItem(name: "endpoint", value: "googleVoidedPurchases")]
            let page = try await client.send("GET", arrivalsURL.url!).json
            #expect(page["endpoint"] as? String == "googleVoidedPurchases")
            let apps = try #require(page["apps"] as? [[String: Any]])
            #expect(apps.count == 1)
            let times = (apps.first?["arrivals"] as? [NSNumber])?.map(\.int64Value)
            #expect(times == [start + 1_000, start + 1_250])
            arrivalsURL.queryItems = [URLQueryItem(name: "endpoint", value: "voided")]
            #expect(try await client.send("GET", arrivalsURL.url!).status == 400)
        }
    }

    @Test("the daily cap turns over at Pacific midnight, on the 25-hour day of 2026-11-01 too")
    func dailyCapFollowsPacificDays() async throws {
        var options = TestKeys.options()
        options.quotas.voidedPerDay = 3
        options.quotas.googleStyle = .forbidden
        // 2026-10-31 23:00 PDT: Pacific midnight is 07:00Z on 1 November, 08:00Z on 2 November (PST).
        let lastPDTHour: Int64 = 1_793_512_800_000
        options.clock = .fixed(startMillis: lastPDTHour)
        options.scenario.anchorMillis = lastPDTHour
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let url = client.voidedURL([:])
            func call(at millis: Int64) async throws -> TestClient.Answer {
                sim.clock.set(millis: millis)
                // Access tokens expire on the simulator clock too.
                return try await client.send("GET", url, bearer: try await client.googleAccessToken())
            }
            for offset in 0..<3 {
                #expect(try await call(at: lastPDTHour + Int64(offset) * 60_000).status == 200)
            }
            let refused = try await call(at: lastPDTHour + 3_599_999)
            #expect(refused.status == 403)
            let error = try #require(try refused.json["error"] as? [String: Any])
            let reasons = (error["errors"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }
            #expect(reasons == ["rateLimitExceeded"])
            #expect((error["message"] as? String)?.contains("Queries per day") == true)
            // 1 November (PDT until 02:00, then PST) starts at 07:00Z.
            let firstNovember = lastPDTHour + 3_600_000
            for offset in 0..<3 {
                #expect(try await call(at: firstNovember + Int64(offset) * 60_000).status == 200)
            }
            // 25 hours later it is still 1 November in Pacific time (23:59:59.999 PST)...
            #expect(try await call(at: firstNovember + 25 * 3_600_000 - 1).status == 403)
            // ... and then 2 November.
            #expect(try await call(at: firstNovember + 25 * 3_600_000).status == 200)
            let stats = try #require(sim.statistics().first { $0.endpoint == .googleVoidedPurchases })
            #expect(stats.maxInAnyPacificDay == 3)
            #expect(stats.grantsPerPacificDay == ["2026-10-31": 3, "2026-11-01": 3, "2026-11-02": 1])
            #expect(stats.refused == 2)
        }
    }

    @Test("Apple answers 429 with error 4290000 and Retry-After in UNIX milliseconds; the sandbox gets 10 %")
    func appleRateLimit() async throws {
        var options = TestKeys.options()
        options.quotas.appleRefundHistoryPerSecond = 3
        options.quotas.appleEnforcement = .perSecond
        options.quotas.appleSandboxFactor = 1.0 / 3
        try await StoreSimulator.withRunning(options) { sim in
            let client = TestClient(sim)
            let bearer = try client.appleBearer()
            let url = client.appleURL("inApps/v2/refund/lookup/2000000000000000")
            for _ in 0..<3 { #expect(try await client.send("GET", url, bearer: bearer).status != 429) }
            let refused = try await client.send("GET", url, bearer: bearer)
            #expect(refused.status == 429)
            #expect(try refused.json["errorCode"] as? Int == 4_290_000)
            #expect(refused.headers["retry-after"] == String(sim.clock.nowMillis() + 1000))
            let sandbox = client.appleURL("inApps/v2/refund/lookup/2000000000000000", sandbox: true)
            #expect(try await client.send("GET", sandbox, bearer: bearer).status != 429)
            #expect(try await client.send("GET", sandbox, bearer: bearer).status == 429)
            sim.clock.advance(millis: 1000)
            #expect(try await client.send("GET", url, bearer: bearer).status != 429)
            let production = sim.statistics().first { $0.environment == "production" }
            #expect(production?.maxInAnySecond == 3)
        }
    }

    @Test("the ledger's window counting and statistics agree on boundaries")
    func ledgerBoundaries() {
        let ledger = QuotaLedger()
        let key = QuotaLedger.Key(app: "a", environment: nil, endpoint: .googleVoidedPurchases)
        let rules = [QuotaRule(limit: 2, window: .rolling(millis: 1000), name: "test")]
        #expect(ledger.admit(key, at: 0, rules: rules) == .granted)
        #expect(ledger.admit(key, at: 999, rules: rules) == .granted)
        #expect(ledger.admit(key, at: 999, rules: rules) == .refused(rule: rules[0], retryAtMillis: 1000))
        #expect(ledger.admit(key, at: 1000, rules: rules) == .granted)
        let stats = ledger.statistics()[0]
        #expect(stats.granted == 3)
        #expect(stats.refused == 1)
        #expect(QuotaLedger.maxInWindow([0, 999, 1000], 1000) == 2)
    }

    @Test("a call stamped before calls already admitted is refused when a window holding it and them is full")
    func lateAdmittedCallCountsInEveryWindowHoldingIt() {
        let ledger = QuotaLedger()
        let key = QuotaLedger.Key(app: "a", environment: nil, endpoint: .googleVoidedPurchases)
        let rules = [QuotaRule(limit: 2, window: .rolling(millis: 1000), name: "test")]
        // Grants at 0 and 1500: the window [600, 1600) holds 1500 only.
        #expect(ledger.admit(key, at: 0, rules: rules) == .granted)
        #expect(ledger.admit(key, at: 1500, rules: rules) == .granted)
        // A call stamped 700 (handled after the one stamped 1500): [0, 1000) would hold 0 and 700, [700, 1700) would
        // hold 700 and 1500: two each, allowed.
        #expect(ledger.admit(key, at: 700, rules: rules) == .granted)
        // Stamped 800: the second before it already holds 0 and 700.
        #expect(ledger.admit(key, at: 800, rules: rules) != .granted)
        // Stamped 1200: the second before it holds 700 only, but [700, 1700) would hold 700, 1200 and 1500, the
        // last admitted before it.
        #expect(ledger.admit(key, at: 1200, rules: rules) != .granted)
        #expect(QuotaLedger.maxInWindow(ledger.grantTimes(key), 1000) == 2)
        #expect(ledger.grantTimes(key) == [0, 700, 1500])
    }

    @Test(
        "Pacific day numbers follow daylight saving time",
        arguments: [
            (Int64(1_793_516_399_999), "2026-10-31"), (1_793_516_400_000, "2026-11-01"),
            (1_793_606_399_999, "2026-11-01"), (1_793_606_400_000, "2026-11-02"),
            (1_773_039_600_000, "2026-03-09"), (1_772_956_799_999, "2026-03-07"),
        ])
    func pacificDays(millis: Int64, date: String) {
        #expect(PacificDay.date(dayNumber: PacificDay.number(millis: millis)) == date)
    }

    @Test("the next Pacific midnight is found across the DST change")
    func nextMidnight() {
        #expect(PacificDay.nextMidnight(after: 1_793_516_400_000) == 1_793_606_400_000)
        #expect(PacificDay.nextMidnight(after: 1_793_516_399_999) == 1_793_516_400_000)
    }
}
