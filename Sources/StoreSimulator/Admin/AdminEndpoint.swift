import Foundation

/// The admin API (no authentication; loopback only). Every answer is JSON.
///
/// - `GET /admin/clock` → `{"nowMillis":N,"now":"RFC 3339","followsWallClock":bool}`
/// - `POST /admin/clock` with `{"now":N}` (ms), `{"advanceSeconds":N}` or `{"advanceMillis":N}` → as GET.
/// - `GET /admin/stats` → `{"nowMillis":N,"quotaNowMillis":N,"connectionsAccepted":N,"endpoints":[{"app","environment"?,"endpoint",
///   "granted","refused","maxInAnySecond","maxInAny30Seconds","maxInAnyMinute","maxInAnyPacificDay",
///   "grantsPerPacificDay":{"YYYY-MM-DD":N},"firstGrantMillis"?,"lastGrantMillis"?}]}` (counts and times on the
///   quota clock; the first and last grant are left out before any; `connectionsAccepted`: the TCP connections the
///   server accepted).
/// - `POST /admin/stats/reset` → `{}`: forgets every count.
/// - `GET /admin/arrivals?endpoint=<endpoint>` → `{"endpoint","apps":[{"app","environment"?,"arrivals":[N]}]}`: when
///   each call to the endpoint that was let through arrived, per app (ms on the quota clock, oldest first, since the
///   last stats reset), to see how a client spent a rolling window.
/// - `GET /admin/faults` → `{"faults":{"<endpoint>":{"rates":{"<kind>":rate},"slowMillis":N}}}`.
/// - `POST /admin/faults` with `{"endpoint":"<endpoint>"|"all","rates":{"<kind>":rate},"slowMillis":N}` → as
///   GET. Endpoints: ``SimulatorEndpoint`` raw values; kinds: ``FaultKind`` raw values.
/// - `GET /admin/latency` → `{"millis":N,"jitterMillis":N,"mostInFlight":{"<endpoint>":N}}`; `POST /admin/latency`
///   with `{"millis":N,"jitterMillis":N}` → as GET (every store answer's delay, ``Latency``; the most calls answered
///   at once per endpoint since the last stats reset).
/// - `GET /admin/quotas` → the ``QuotaOptions`` as JSON; `POST /admin/quotas` with any of its keys → as GET.
/// - `GET /admin/scenario` → `{"spec":{...},"purchases":N,"refunds":N,"notifications":N,"urls":{...},
///   "keys":{"appleKeyId","appleIssuerId","googleClientEmail","googlePrivateKeyId"}}`.
/// - `GET /admin/truth/refunds` → ``GroundTruth`` (`{"nowMillis","appleRefunds":[...],"googleVoids":[...]}`).
/// - `GET /admin/truth/subscriptions?offset=0&limit=1000` → `{"nowMillis","total","subscriptions":[...]}` of
///   ``SubscriptionTruth`` (subscriptions that do not exist yet are left out of a page).
struct AdminEndpoint {
    let state: SimulatorState

    func handle(_ request: StoreRequest) -> StoreReply {
        let path = Array(request.segments.dropFirst())
        let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
        switch (request.method, path) {
        case ("GET", ["clock"]):
            return clock()
        case ("POST", ["clock"]):
            return setClock(body)
        case ("GET", ["stats"]):
            return encode(
                StatisticsPage(
                    nowMillis: state.now, quotaNowMillis: state.quotaNow,
                    connectionsAccepted: state.connectionsAccepted, endpoints: statistics()))
        case ("POST", ["stats", "reset"]):
            state.ledger.reset()
            state.resetFlight()
            state.resetConnections()
            return .json(200, "{}")
        case ("GET", ["arrivals"]):
            guard let name = request.parameter("endpoint"), let endpoint = SimulatorEndpoint(rawValue: name) else {
                return error("arrivals: the endpoint parameter is not one of the simulator's endpoints")
            }
            let apps = state.ledger.grantTimes(of: endpoint).map {
                AppArrivals(app: $0.key.app, environment: $0.key.environment, arrivals: $0.times)
            }
            return encode(ArrivalsPage(endpoint: name, apps: apps))
        case ("GET", ["latency"]):
            return latency()
        case ("POST", ["latency"]):
            let current = state.latency
            state.latency = Latency(
                millis: (body["millis"] as? NSNumber)?.intValue ?? current.millis,
                jitterMillis: (body["jitterMillis"] as? NSNumber)?.intValue ?? current.jitterMillis)
            return latency()
        case ("GET", ["faults"]):
            return faults()
        case ("POST", ["faults"]):
            return setFaults(body)
        case ("GET", ["quotas"]):
            return encode(state.quotas)
        case ("POST", ["quotas"]):
            return setQuotas(body)
        case ("GET", ["scenario"]):
            return scenario()
        case ("GET", ["truth", "refunds"]):
            return encode(state.groundTruth())
        case ("GET", ["truth", "subscriptions"]):
            let offset = request.parameter("offset").flatMap { Int($0) } ?? 0
            let limit = request.parameter("limit").flatMap { Int($0) } ?? 1000
            let now = state.now
            return encode(
                SubscriptionPage(
                    nowMillis: now, total: state.scenario.subscriptionCount,
                    subscriptions: state.scenario.subscriptionTruth(at: now, offset: offset, limit: limit)))
        default:
            return StoreReply(status: 404, body: "{\"error\":\"unknown admin endpoint\"}")
        }
    }

    /// Sets the clock (`now`) or moves it on (`advanceSeconds`, `advanceMillis`).
    private func setClock(_ body: [String: Any]) -> StoreReply {
        if let now = body["now"] as? NSNumber {
            state.clock.set(millis: now.int64Value)
        } else if let seconds = body["advanceSeconds"] as? NSNumber {
            state.clock.advance(millis: Int64(seconds.doubleValue * 1000))
        } else if let millis = body["advanceMillis"] as? NSNumber {
            state.clock.advance(millis: millis.int64Value)
        } else {
            return error("expected now, advanceSeconds or advanceMillis")
        }
        return clock()
    }

    /// Merges the given fields into the quota options.
    private func setQuotas(_ body: [String: Any]) -> StoreReply {
        guard
            var merged = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(state.quotas)))
                as? [String: Any]
        else { return error("cannot read quotas") }
        merged.merge(body) { $1 }
        guard let data = try? JSONSerialization.data(withJSONObject: merged),
            let quotas = try? JSONDecoder().decode(QuotaOptions.self, from: data)
        else { return error("invalid quota options") }
        state.quotas = quotas
        return encode(quotas)
    }

    private struct LatencyPage: Codable {
        var millis: Int
        var jitterMillis: Int
        var mostInFlight: [String: Int]
    }

    private func latency() -> StoreReply {
        let current = state.latency
        var most: [String: Int] = [:]
        for endpoint in SimulatorEndpoint.allCases where state.mostInFlight(endpoint) > 0 {
            most[endpoint.rawValue] = state.mostInFlight(endpoint)
        }
        return encode(LatencyPage(millis: current.millis, jitterMillis: current.jitterMillis, mostInFlight: most))
    }

    private struct ArrivalsPage: Codable {
        var endpoint: String
        var apps: [AppArrivals]
    }

    private struct AppArrivals: Codable {
        var app: String
        var environment: String?
        var arrivals: [Int64]
    }

    private struct StatisticsPage: Codable {
        var nowMillis: Int64
        var quotaNowMillis: Int64
        var connectionsAccepted: Int
        var endpoints: [StatisticsEntry]
    }

    private struct StatisticsEntry: Codable {
        var app: String
        var environment: String?
        var endpoint: String
        var granted, refused, maxInAnySecond, maxInAny30Seconds, maxInAnyMinute, maxInAnyPacificDay: Int
        var grantsPerPacificDay: [String: Int]
        var firstGrantMillis: Int64?
        var lastGrantMillis: Int64?
    }

    private struct SubscriptionPage: Codable {
        var nowMillis: Int64
        var total: Int
        var subscriptions: [SubscriptionTruth]
    }

    private func statistics() -> [StatisticsEntry] {
        state.ledger.statistics().map {
            StatisticsEntry(
                app: $0.app, environment: $0.environment, endpoint: $0.endpoint.rawValue, granted: $0.granted,
                refused: $0.refused, maxInAnySecond: $0.maxInAnySecond, maxInAny30Seconds: $0.maxInAny30Seconds,
                maxInAnyMinute: $0.maxInAnyMinute, maxInAnyPacificDay: $0.maxInAnyPacificDay,
                grantsPerPacificDay: $0.grantsPerPacificDay, firstGrantMillis: $0.firstGrantMillis,
                lastGrantMillis: $0.lastGrantMillis)
        }
    }

    private func clock() -> StoreReply {
        let now = state.now
        return .json { json in
            json.object { object in
                object.field("nowMillis", now)
                object.field("now", TimeFormat.rfc3339(millis: now))
                object.field("followsWallClock", state.clock.followsWallClock)
            }
        }
    }

    private func faults() -> StoreReply {
        let settings = state.faults.settings()
        return .json { json in
            json.object { object in
                object.object("faults") { list in
                    for endpoint in SimulatorEndpoint.allCases {
                        guard let setting = settings[endpoint] else { continue }
                        list.object(endpoint.rawValue) { entry in
                            entry.object("rates") { rates in
                                for kind in FaultKind.allCases where setting.rate(kind) > 0 {
                                    rates.key(kind.rawValue)
                                    rates.raw(String(setting.rate(kind)))
                                }
                            }
                            entry.field("slowMillis", setting.slowMillis)
                        }
                    }
                }
            }
        }
    }

    private func setFaults(_ body: [String: Any]) -> StoreReply {
        guard let name = body["endpoint"] as? String else { return error("expected endpoint") }
        let endpoints: [SimulatorEndpoint]
        if name == "all" {
            endpoints = SimulatorEndpoint.allCases
        } else if let endpoint = SimulatorEndpoint(rawValue: name) {
            endpoints = [endpoint]
        } else {
            return error("unknown endpoint \(name)")
        }
        var settings = FaultSettings()
        if let slow = body["slowMillis"] as? NSNumber { settings.slowMillis = slow.intValue }
        for (kindName, value) in body["rates"] as? [String: Any] ?? [:] {
            guard let kind = FaultKind(rawValue: kindName), let rate = value as? NSNumber,
                (0...1).contains(rate.doubleValue)
            else { return error("invalid rate for \(kindName)") }
            settings.rates[kind] = rate.doubleValue
        }
        for endpoint in endpoints { state.faults.set(settings, for: endpoint) }
        return faults()
    }

    private func scenario() -> StoreReply {
        let scenario = state.scenario
        let keys = state.keys
        let specJSON = (try? JSONEncoder().encode(scenario.spec)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return .json { json in
            json.object { object in
                object.key("spec")
                object.raw(specJSON)
                object.field("purchases", scenario.plans.count)
                object.field("refunds", scenario.refunds.count)
                object.field("notifications", scenario.notifications.reduce(0) { $0 + $1.count })
                object.object("urls") { urls in
                    urls.field("googleAPIBase", state.baseURL)
                    urls.field("googleTokenURL", state.tokenURL)
                    urls.field("appleProductionBase", state.baseURL)
                    urls.field("appleSandboxBase", state.baseURL + "/sandbox")
                }
                object.object("keys") { object in
                    object.field("appleKeyId", keys.appStoreKey.keyId)
                    object.field("appleIssuerId", keys.appStoreKey.issuerId)
                    object.field("googleClientEmail", keys.serviceAccount.clientEmail)
                    object.field("googlePrivateKeyId", keys.serviceAccount.privateKeyId)
                }
            }
        }
    }

    private func encode(_ value: some Encodable) -> StoreReply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return error("cannot encode") }
        return .json(200, String(decoding: data, as: UTF8.self))
    }

    private func error(_ message: String) -> StoreReply {
        StoreReply.json(400) { json in json.object { $0.field("error", message) } }
    }
}
