import Synchronization

/// Everything the endpoints share while the server runs: the scenario, the clock, the quota ledger, the fault
/// schedule, the keys, and the Google access tokens issued so far.
final class SimulatorState: Sendable {
    /// An issued Google access token.
    struct AccessGrant: Sendable {
        var expiresMillis: Int64
        /// The OAuth scopes the token was granted.
        var scopes: Set<String> = []
    }

    let options: SimulatorOptions
    let scenario: Scenario
    let clock: SimulatorClock
    let ledger = QuotaLedger()
    let faults: FaultInjector
    let keys: SimulatorKeys
    let signer: JWSSigner
    let pageTokens: PageToken
    /// App Store Server API bearer tokens already checked.
    let appleBearers = AppleBearerMemo()
    /// Notification History's signed payloads, each signed once.
    let signedNotifications = SignedNotifications()
    /// What Send Consumption Information was sent.
    let consumption = ConsumptionAnswers()
    /// The RTDN pull subscriptions.
    let pubsub: PubSubSubscriptions
    /// What `orders.reviewrefund` was sent.
    let reviews = RefundReviewAnswers()
    /// Months (`YYYY-MM`) whose earnings object is served damaged (not a zip).
    let spoiledEarnings = Mutex<Set<String>>([])
    private let accessTokens = Mutex<[String: AccessGrant]>([:])
    private let issued = Atomic<UInt64>(0)
    private let accepted = Atomic<Int>(0)
    private let origin = Mutex<String>("http://127.0.0.1")
    private let quotaOptions: Mutex<QuotaOptions>
    private let latencyOption: Mutex<Latency>
    private let flight = Mutex<[SimulatorEndpoint: (now: Int, most: Int)]>([:])
    private let presented = Mutex<[String: Int]>([:])
    private let appFaults = Mutex<[String: AppFault]>([:])

    init(options: SimulatorOptions, scenario: Scenario, keys: SimulatorKeys) {
        self.options = options
        self.scenario = scenario
        self.clock = SimulatorClock(options.clock ?? .fixed(startMillis: options.scenario.anchorMillis))
        self.faults = FaultInjector(seed: options.faultSeed ?? options.scenario.seed, settings: options.faults)
        self.keys = keys
        self.signer = JWSSigner(chain: keys.chain)
        self.pageTokens = PageToken(seed: options.scenario.seed)
        self.quotaOptions = Mutex(options.quotas)
        self.latencyOption = Mutex(options.latency)
        self.pubsub = PubSubSubscriptions(
            scenario: scenario, ackDeadlineMillis: options.pubsubAckDeadlineMillis,
            ackRefusals: options.pubsubAckRefusals)
    }

    /// The simulator's now (ms).
    var now: Int64 { clock.nowMillis() }

    /// What has happened by now: the scenario's refunds and voids, and the voids of the refund reviews Google
    /// decided.
    func groundTruth() -> GroundTruth {
        let now = self.now
        var truth = scenario.groundTruth(at: now, oddRows: options.oddRows)
        truth.googleVoids = RefundReviewOutcomes(state: self).truth(truth.googleVoids, now: now)
        truth.appleRefunds = AppleRequestOutcomes(state: self).truth(truth.appleRefunds, now: now)
        return truth
    }

    /// The time JWTs are checked against.
    var authNow: Int64 { options.authUsesWallClock ? SimulatorClock.wallMillis() : clock.nowMillis() }

    /// The limits in force.
    var quotas: QuotaOptions {
        get { quotaOptions.withLock { $0 } }
        set { quotaOptions.withLock { $0 = newValue } }
    }

    /// How long every store answer takes.
    var latency: Latency {
        get { latencyOption.withLock { $0 } }
        set { latencyOption.withLock { $0 = newValue } }
    }

    /// The fault striking every call of an app (by its id), if any.
    func appFault(_ app: String) -> AppFault? {
        appFaults.withLock { $0[app] }
    }

    /// Sets or lifts (nil) the fault of an app.
    func setAppFault(_ fault: AppFault?, app: String) {
        appFaults.withLock { $0[app] = fault }
    }

    /// Counts a call to `endpoint` as being answered (`entering`) or answered; keeps the most at once.
    func track(_ endpoint: SimulatorEndpoint, entering: Bool) {
        flight.withLock { flight in
            var entry = flight[endpoint] ?? (0, 0)
            entry.now += entering ? 1 : -1
            entry.most = max(entry.most, entry.now)
            flight[endpoint] = entry
        }
    }

    /// The most calls to `endpoint` being answered at once since start (or the last statistics reset).
    func mostInFlight(_ endpoint: SimulatorEndpoint) -> Int {
        flight.withLock { $0[endpoint]?.most ?? 0 }
    }

    /// Forgets the most-at-once counts (calls being answered stay counted).
    func resetFlight() {
        flight.withLock { flight in
            for (endpoint, entry) in flight { flight[endpoint] = (entry.now, entry.now) }
        }
    }

    /// Counts a connection the server accepted.
    func connectionAccepted() {
        accepted.add(1, ordering: .relaxed)
    }

    /// The connections accepted since start (or the last statistics reset).
    var connectionsAccepted: Int { accepted.load(ordering: .relaxed) }

    /// Forgets the connections accepted so far.
    func resetConnections() {
        accepted.store(0, ordering: .relaxed)
    }

    /// The time quota windows count on.
    var quotaNow: Int64 { quotas.useWallClock ? SimulatorClock.wallMillis() : clock.nowMillis() }

    /// `http://host:port`, once the server listens.
    var baseURL: String {
        get { origin.withLock { $0 } }
        set { origin.withLock { $0 = newValue } }
    }

    /// The Google token endpoint's URL (the assertion's `aud`).
    var tokenURL: String { baseURL + "/token" }

    /// Issues a Google access token valid for the configured lifetime.
    func issueAccessToken(scopes: Set<String> = []) -> (token: String, expiresIn: Int64) {
        let serial = issued.add(1, ordering: .relaxed).newValue
        let bits = SplitMix64.mix(options.scenario.seed, serial, UInt64(bitPattern: SimulatorClock.wallMillis()))
        let token = "ya29.sim-" + String(serial) + "-" + String(bits, radix: 36)
        let lifetime = options.accessTokenLifetimeSeconds
        let expires = now + lifetime * 1000
        accessTokens.withLock { $0[token] = AccessGrant(expiresMillis: expires, scopes: scopes) }
        return (token, lifetime)
    }

    /// Whether the `expiredAccessToken` fault drawn for this call strikes this bearer token. A token fresh from the
    /// token endpoint (or an Apple JWT just signed) is good for many minutes: one presented fewer than
    /// ``freshTokenCalls`` times cannot have expired yet, so a client that signs in again goes on even while other
    /// calls share its new token. At rate 1 the fault stands for a revoked key: every token is refused. Counts the
    /// token's presentations.
    func tokenExpired(_ token: String?, faults: Set<FaultKind>, endpoint: SimulatorEndpoint) -> Bool {
        guard let token else { return false }
        let before = presented.withLock { counts in
            defer { counts[token, default: 0] += 1 }
            return counts[token, default: 0]
        }
        guard faults.contains(.expiredAccessToken) else { return false }
        return before >= Self.freshTokenCalls || (self.faults.settings()[endpoint]?.rate(.expiredAccessToken) ?? 0) >= 1
    }

    /// Calls a new bearer token serves before the `expiredAccessToken` fault may strike it.
    static let freshTokenCalls = 10

    /// Whether a Google access token is known and unexpired on the simulator clock.
    func accessTokenIsValid(_ token: String) -> Bool {
        guard let grant = accessTokens.withLock({ $0[token] }) else { return false }
        return now < grant.expiresMillis
    }

    /// Whether a known Google access token was granted `scope` (or `cloud-platform`, which covers every API): a real
    /// API answers a token of another API's scope 403 (``GoogleError/insufficientScope()``).
    func accessToken(_ token: String, grants scope: String) -> Bool {
        guard let grant = accessTokens.withLock({ $0[token] }) else { return false }
        return grant.scopes.contains(scope) || grant.scopes.contains(GoogleTokenEndpoint.cloudPlatformScope)
    }

    /// The index of the Google app with this package name.
    func googleApp(packageName: String) -> Int? {
        scenario.spec.apps.firstIndex { $0.platform == .google && $0.storeId == packageName }
    }

    /// The index of the Apple app with this bundle id.
    func appleApp(bundleId: String) -> Int? {
        scenario.spec.apps.firstIndex { $0.platform == .apple && $0.storeId == bundleId }
    }
}
