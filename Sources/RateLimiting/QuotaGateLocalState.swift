/// An (app, API) pair, the unit every limit is kept for.
struct QuotaKey: Hashable, Sendable {
    var app: String
    var api: StoreAPI
}

/// The calls of one (app, API, purpose) that can share one round trip: they are counted against the same limits.
struct BatchKey: Hashable, Sendable {
    var app: String
    var api: StoreAPI
    var purpose: CallPurpose
}

/// What a call waiting in a batch is told by the call that asked for the whole batch.
enum BatchRole: Sendable {
    /// Nobody is gathering a batch of this key (or its leader was cancelled): this call asks, for itself and
    /// whoever joins meanwhile.
    case lead
    /// Answered by the batch's round trip: the attempt, and when that round trip was asked for.
    case answered(QuotaAttempt, asked: ContinuousClock.Instant)
}

/// The per-process state of a ``PostgresQuotaGate`` that needs no database: kept behind a `Mutex` so that pacing,
/// local blocks and batching cost no hop to the gate's database thread.
struct QuotaGateLocalState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Blocks this process learnt but could not write (the database was away), so it at least obeys them itself.
    var localBlocks: [QuotaKey: Instant] = [:]
    /// Spent days this process learnt but could not write.
    var localExhausted: [QuotaKey: PacificDay] = [:]
    /// This process's calls paced by their answers (see ``ArrivalPacer``).
    var pacers: [QuotaKey: ArrivalPacer<Instant>] = [:]
    /// Batches being gathered: the calls waiting for the batch's leader to reach the database thread.
    var gathering: [BatchKey: [CheckedContinuation<BatchRole, any Error>]] = [:]
    /// What the gate has done so far.
    var statistics = QuotaGateStatistics()

    /// Joins the batch of `key` being gathered, or starts one.
    /// - Returns: whether the call leads (it starts the batch and must ask for it).
    mutating func join(_ key: BatchKey, _ continuation: CheckedContinuation<BatchRole, any Error>) -> Bool {
        if gathering[key] != nil {
            gathering[key]?.append(continuation)
            statistics.joined += 1
            return false
        }
        gathering[key] = []
        return true
    }
}
