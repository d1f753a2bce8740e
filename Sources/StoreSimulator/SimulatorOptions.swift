/// Everything a simulator run is started with. The defaults are the stores' published behaviour with a fixed
/// clock at the scenario's anchor and no faults.
public struct SimulatorOptions: Sendable {
    /// How Google's `voidedSource` and `voidedReason` are sent.
    public enum EnumEncoding: String, Sendable, Codable {
        /// As JSON numbers (the schema).
        case numbers
        /// As JSON strings (Google's own example).
        case strings
        /// Strings or numbers, varying by row.
        case mixed
    }

    /// What voided purchases does with an `endTime` after now.
    public enum FutureEndTime: String, Sendable, Codable {
        /// 400 INVALID_ARGUMENT (the default: the documentation says it cannot be later than now).
        case reject
        /// Treat it as now.
        case clamp
    }

    /// The scenario to generate.
    public var scenario: ScenarioSpec
    /// The clock; nil means fixed at the scenario's anchor.
    public var clock: SimulatorClock.Mode?
    /// The limits.
    public var quotas = QuotaOptions()
    /// Fault rates per endpoint.
    public var faults: [SimulatorEndpoint: FaultSettings] = [:]
    /// How long every store answer takes (none by default; changeable while running: ``StoreSimulator/latency``).
    public var latency = Latency.none
    /// Seed of the fault schedule (default: the scenario seed).
    public var faultSeed: UInt64?
    /// Address to listen on.
    public var host = "127.0.0.1"
    /// Port; 0 picks a free one.
    public var port = 0
    /// Google `voidedSource`/`voidedReason` encoding.
    public var voidedEnumEncoding = EnumEncoding.numbers
    /// The fraction of refund rows answered as odd data (repeats, unknown codes, missing fields, rows no ledger can
    /// take); see ``OddRow``. 0: none.
    public var oddRows: Double = 0
    /// Google voided purchases `endTime` after now.
    public var futureEndTime = FutureEndTime.reject
    /// Check JWT times (Google assertion, Apple bearer) against the wall clock instead of the simulator clock,
    /// for clients that sign with real time while the simulator clock is moved.
    public var authUsesWallClock = false
    /// Google access token lifetime, seconds.
    public var accessTokenLifetimeSeconds: Int64 = 3600
    /// Allowed clock skew for JWT `iat`/`exp`, seconds.
    public var clockSkewSeconds: Int64 = 300
    /// Apple pagination tokens expire this long after they were issued, seconds.
    public var pageTokenLifetimeSeconds: Int64 = 86_400
    /// Google voided-purchases page tokens expire this long after they were issued, seconds; nil (the default) keeps
    /// them valid for ever. Google documents no lifetime; tests set one to play a run resumed days later.
    public var voidedPageTokenLifetimeSeconds: Int64?
    /// Google Orders API: answer 403 (the service account lacks the "View financial data" permission).
    public var ordersPermissionDenied = false
    /// Cloud Pub/Sub: how long a delivered RTDN message waits for its acknowledgement before it is delivered again
    /// (Pub/Sub's default: 10 s; 0 delivers every unacknowledged message on every pull).
    public var pubsubAckDeadlineMillis: Int64 = 10_000
    /// Cloud Pub/Sub: the first this many acknowledge calls are refused (403), the messages left unacknowledged.
    public var pubsubAckRefusals = 0
    /// Key material; nil generates new keys at start.
    public var keys: SimulatorKeys?

    /// Creates options for a scenario.
    public init(scenario: ScenarioSpec = ScenarioSpec()) {
        self.scenario = scenario
    }
}
