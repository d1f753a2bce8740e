import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import Synchronization

/// A running store simulator: Google Play Developer API, Google OAuth and the App Store Server API (production
/// and sandbox) on one loopback port, answering from a generated scenario on its own clock.
///
/// ```swift
/// try await StoreSimulator.withRunning(SimulatorOptions(scenario: ScenarioSpec(seed: 7))) { sim in
///     let voided = sim.googleAPIBaseURL.appending(path: "androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases")
///     sim.clock.advance(millis: 86_400_000)
///     let truth = sim.groundTruth()
/// }
/// ```
///
/// URL layout: Google's API under ``googleAPIBaseURL`` (`/androidpublisher/v3/...`), its token endpoint at
/// ``googleTokenURL`` (`/token`), Apple production under ``appleProductionBaseURL`` (`/inApps/...`), Apple sandbox
/// under ``appleSandboxBaseURL`` (`/sandbox/inApps/...`), the admin API under ``adminURL`` (see `AdminEndpoint`).
public final class StoreSimulator: Sendable {
    let state: SimulatorState

    private init(state: SimulatorState) {
        self.state = state
    }

    /// Builds the scenario and keys, starts the server, runs `body`, and stops the server when it returns.
    /// - Parameters:
    ///   - options: scenario, clock, quotas, faults, address (port 0 picks a free port).
    ///   - body: the work to do while the simulator runs.
    /// - Returns: what `body` returns.
    /// - Throws: ``SimulatorError`` when the scenario is invalid or the server cannot listen; what `body` throws.
    public static func withRunning<Result>(
        _ options: SimulatorOptions, _ body: (StoreSimulator) async throws -> Result
    ) async throws -> Result {
        let simulator = try prepare(options)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = simulator.application { port in continuation.yield(port) }
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [application], gracefulShutdownSignals: [], logger: application.logger))
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            group.addTask {
                defer { continuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.waitForAll()
                throw SimulatorError(.server, "the server stopped before it listened")
            }
            simulator.state.baseURL = "http://\(options.host):\(port)"
            let result: Swift.Result<Result, any Error>
            do {
                result = .success(try await body(simulator))
            } catch {
                result = .failure(error)
            }
            // Graceful: stop listening, close idle connections, let answers in flight finish.
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try result.get()
        }
    }

    /// Runs the simulator until SIGTERM or SIGINT (for `storesim serve`).
    /// - Parameters:
    ///   - options: as for ``withRunning(_:_:)``.
    ///   - onListening: called once the server listens, with the simulator (its URLs are known by then).
    public static func serve(_ options: SimulatorOptions, onListening: @escaping @Sendable (StoreSimulator) -> Void)
        async throws
    {
        let simulator = try prepare(options)
        let application = simulator.application { port in
            simulator.state.baseURL = "http://\(options.host):\(port)"
            onListening(simulator)
        }
        try await application.runService()
    }

    /// Builds the scenario and the keys without serving.
    static func prepare(_ options: SimulatorOptions) throws -> StoreSimulator {
        let scenario = try ScenarioGenerator(spec: options.scenario).generate()
        let keys = try options.keys ?? SimulatorKeys.generate(seed: options.scenario.seed)
        return StoreSimulator(state: SimulatorState(options: options, scenario: scenario, keys: keys))
    }

    private func application(listening: @escaping @Sendable (Int) -> Void)
        -> Application<SimulatorResponder>
    {
        var logger = Logger(label: "storesim")
        logger.logLevel = .warning
        let options = state.options
        let state = state
        var http = HTTP1Channel.Configuration()
        // Called once per accepted connection, to build its pipeline: counting there costs a request nothing.
        http.additionalChannelHandlers = {
            state.connectionAccepted()
            return []
        }
        return Application(
            responder: SimulatorResponder(router: StoreRouter(state: state)),
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: nil),
            onServerRunning: { channel in listening(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    // MARK: Addresses

    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: state.baseURL)! }
    /// Google Play Developer API base: requests go to `BASE/androidpublisher/v3/...`.
    public var googleAPIBaseURL: URL { baseURL }
    /// Google OAuth token endpoint (the service-account key's `token_uri`, the assertion's `aud`).
    public var googleTokenURL: URL { URL(string: state.tokenURL)! }
    /// App Store Server API, production: `BASE/inApps/...`.
    public var appleProductionBaseURL: URL { baseURL }
    /// App Store Server API, sandbox: `BASE/sandbox/inApps/...`.
    public var appleSandboxBaseURL: URL { baseURL.appendingPathComponent("sandbox") }
    /// The admin API: `BASE/admin/...`.
    public var adminURL: URL { baseURL.appendingPathComponent("admin") }

    // MARK: Scenario, keys, truth

    /// The apps of the scenario.
    public var apps: [SimulatedApp] { state.scenario.spec.apps }
    /// The products of the scenario.
    public var products: [SimulatedProduct] { state.scenario.spec.products }
    /// The scenario spec.
    public var spec: ScenarioSpec { state.scenario.spec }
    /// Key material: the Apple signing chain (trust its root), the App Store key, the Google service account.
    public var keys: SimulatorKeys { state.keys }
    /// The service-account key file JSON, with `token_uri` pointing at this simulator.
    public var serviceAccountJSON: String { state.keys.serviceAccount.json(tokenURI: state.tokenURL) }

    /// The simulator clock (set and advance it to play time forward).
    public var clock: SimulatorClock { state.clock }

    /// Every refund and void that has happened by the clock's now, the voids of refund reviews Google decided
    /// included.
    public func groundTruth() -> GroundTruth {
        state.groundTruth()
    }

    /// The true state of subscriptions `offset..<offset+limit` at the clock's now (those not started yet are left
    /// out).
    public func subscriptionTruth(offset: Int = 0, limit: Int = .max) -> [SubscriptionTruth] {
        state.scenario.subscriptionTruth(at: state.now, offset: offset, limit: limit == .max ? Int.max - offset : limit)
    }

    /// Every consumption answer accepted so far (Send Consumption Information v2), with how often each
    /// transaction was answered.
    public func consumptionAnswers() -> [ConsumptionAnswer] { state.consumption.all }

    /// Every `orders.reviewrefund` answer, the first body per order with the calls in all.
    public func refundReviewAnswers() -> [RefundReviewAnswer] { state.reviews.all }

    /// The RTDN pull subscription of a Google app (`projects/storesim/subscriptions/<app>-rtdn`), served at
    /// ``baseURL``.
    public func rtdnSubscription(app: String) -> String { PubSubSubscriptions.name(app: app) }

    /// RTDN messages of a Google app not acknowledged yet.
    public func unacknowledgedRTDN(app: String) -> Int { state.pubsub.unacknowledged(app: app) }

    // MARK: Quotas and faults

    /// Calls granted and refused per app and endpoint, with the most seen in any window.
    public func statistics() -> [EndpointStatistics] {
        state.ledger.statistics()
    }

    /// The times (ms on the quota clock) of every call granted to a Google endpoint of `app`, oldest first, for
    /// checks the fixed windows of ``statistics()`` do not cover (e.g. a quota scaled down to 5 per 2 s).
    public func grantTimes(app: String, endpoint: SimulatorEndpoint) -> [Int64] {
        state.ledger.grantTimes(QuotaLedger.Key(app: app, environment: nil, endpoint: endpoint))
    }

    /// The most calls granted to a Google endpoint of `app` in any half-open window of `millis` milliseconds.
    public func maxGranted(app: String, endpoint: SimulatorEndpoint, inAnyMillis millis: Int64) -> Int {
        QuotaLedger.maxInWindow(grantTimes(app: app, endpoint: endpoint), millis)
    }

    /// Forgets every call count.
    public func resetStatistics() {
        state.ledger.reset()
        state.resetFlight()
        state.resetConnections()
    }

    /// The TCP connections the server accepted since start or the last ``resetStatistics()``: a client that keeps
    /// its connections open between calls opens as many as it has calls in flight at once, not one per call.
    public var connectionsAccepted: Int { state.connectionsAccepted }

    /// How long every store answer takes (changeable while running).
    public var latency: Latency {
        get { state.latency }
        set { state.latency = newValue }
    }

    /// The most calls to an endpoint (all apps) the simulator was answering at the same moment, since start or the
    /// last ``resetStatistics()``: above 1 when a client keeps several calls in flight.
    public func mostInFlight(_ endpoint: SimulatorEndpoint) -> Int {
        state.mostInFlight(endpoint)
    }

    /// The limits in force (changeable while running).
    public var quotas: QuotaOptions {
        get { state.quotas }
        set { state.quotas = newValue }
    }

    /// Sets an endpoint's fault rates.
    public func setFaults(_ settings: FaultSettings, for endpoint: SimulatorEndpoint) {
        state.faults.set(settings, for: endpoint)
    }

    /// Removes every fault.
    public func clearFaults() {
        state.faults.setAll([:])
    }

    /// Sets (or lifts, with nil) a fault that strikes every call of one app (by its id): its store hangs or refuses
    /// its credentials while the other apps are answered as usual. Lifting ``AppFault/hang`` answers the held calls.
    public func setFault(_ fault: AppFault?, app: String) {
        state.setAppFault(fault, app: app)
    }
}

extension StoreSimulator {
    /// Generates a scenario and describes its size (`storesim init` prints it).
    /// - Throws: ``SimulatorError`` when the spec is invalid.
    public static func summarize(_ spec: ScenarioSpec) throws -> String {
        let scenario = try ScenarioGenerator(spec: spec).generate()
        let notifications = scenario.notifications.reduce(0) { $0 + $1.count }
        return "\(scenario.plans.count) purchases, \(scenario.refunds.count) refunds and voids, "
            + "\(notifications) Apple notifications"
    }
}
