import RateLimiting

/// Wraps the shared gate so that a stop signal ends any wait in it at once (a window's wait, a store's block): the
/// waiting call throws the "stopped by signal" error (exit 75) and no store call starts after the signal, even one
/// whose grant came at the same moment.
public struct StoppableQuotaGate: QuotaGate {
    /// The real gate.
    public let base: any QuotaGate
    /// The stop signal.
    public let shutdown: ShutdownSignal

    /// Wraps `base`.
    public init(base: any QuotaGate, shutdown: ShutdownSignal) {
        self.base = base
        self.shutdown = shutdown
    }

    /// The error a call stopped by the signal throws: exit 75, progress saved.
    public static var stopped: ReconcilerError {
        ReconcilerError(.temporary, "stopped by signal after saving the last page; run again to continue")
    }

    @discardableResult
    public func acquire(app: String, api: StoreAPI, purpose: CallPurpose) async throws -> ContinuousClock.Instant? {
        if shutdown.isRequested { throw Self.stopped }
        let (base, shutdown) = (base, shutdown)
        let raced = await race(
            { () async -> Result<ContinuousClock.Instant?, any Error> in
                do {
                    return .success(try await base.acquire(app: app, api: api, purpose: purpose))
                } catch {
                    return .failure(error)
                }
            }, until: shutdown)
        // A grant taken as the signal came is left unused: the call it was for is not sent.
        guard !raced.stopped, !shutdown.isRequested else { throw Self.stopped }
        return try raced.value.get()
    }

    public func report(app: String, api: StoreAPI, feedback: QuotaFeedback) async {
        await base.report(app: app, api: api, feedback: feedback)
    }

    public func beginCall(app: String, api: StoreAPI) async throws {
        try await base.beginCall(app: app, api: api)
    }

    public func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async {
        await base.endCall(app: app, api: api, answeredAgo: answeredAgo)
    }
}
