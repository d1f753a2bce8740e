extension PostgresQuotaGate {
    /// How often a call waiting for a window's count of calls in flight looks again.
    static var inFlightPoll: Duration { .milliseconds(5) }

    /// Waits until this process's answers of the (app, API)'s calls allow one more (``ArrivalPacer``), then counts
    /// it in flight. Paced: Apple's APIs, whose grants carry no leave-by time (Apple enforces its per-second limits
    /// over the hour, but a store or simulator counting each second would refuse a call that arrived late). Not
    /// paced: APIs counted in short windows, whose calls must leave within the margin of their grant already, since
    /// waiting for answers would cost a slow store's answer time per window (1.5 s of Google's 30 s is 5 %); and
    /// APIs without a configured limit.
    /// - Throws: `CancellationError` when cancelled while waiting.
    public nonisolated func beginCall(app: String, api: StoreAPI) async throws {
        guard !api.countsShortWindows, let windows = policy.limit(app: app, api: api)?.windows, !windows.isEmpty
        else { return }
        let key = QuotaKey(app: app, api: api)
        let shard = local[key]
        while true {
            try Task.checkCancellation()
            // Judged again after every sleep: other calls of this gate ran meanwhile.
            let now = clock.now
            let wait = shard.withLock { state -> ArrivalPacer<C.Instant>.Wait in
                var pacer = state.pacers[key] ?? ArrivalPacer(windows: windows)
                let wait = pacer.wait(at: now)
                if wait == .none { pacer.started() } else { state.statistics.paced += 1 }
                state.pacers[key] = pacer
                return wait
            }
            switch wait {
            case .none:
                return
            case .until(let instant):
                try await clock.sleep(until: instant, tolerance: nil)
            case .answer:
                try await clock.sleep(until: clock.now.advanced(by: Self.inFlightPoll), tolerance: nil)
            }
        }
    }

    /// Counts a call begun with ``beginCall(app:api:)`` as answered `answeredAgo` before now.
    public nonisolated func endCall(app: String, api: StoreAPI, answeredAgo: Duration) async {
        let now = clock.now.advanced(by: .zero - max(.zero, answeredAgo))
        let key = QuotaKey(app: app, api: api)
        local[key].withLock { $0.pacers[key]?.finished(at: now) }
    }
}
