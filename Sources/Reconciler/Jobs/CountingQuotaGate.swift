import RateLimiting

/// Wraps the shared gate to count every call a job makes per API (for `job_run.calls` and metrics). Every store call
/// passes `acquire`, so the count is exact, retries included.
public struct CountingQuotaGate: QuotaGate {
    /// The real gate.
    public let base: any QuotaGate
    /// Where calls are counted.
    public let counters: JobCounters

    /// Wraps `base`.
    public init(base: any QuotaGate, counters: JobCounters) {
        self.base = base
        self.counters = counters
    }

    @discardableResult
    public func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        let leaveBy = try await base.acquire(app: app, api: api, purpose: purpose)
        counters.call(api.rawValue)
        return leaveBy
    }

    public func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        if feedback != .accepted { counters.call("\(api.rawValue).throttled") }
        await base.report(app: app, api: api, feedback: feedback)
    }

    public func beginCall(app: String, api: StoreAPI) async throws {
        try await base.beginCall(app: app, api: api)
    }

    public func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async {
        await base.endCall(app: app, api: api, answeredAgo: answeredAgo)
    }
}
