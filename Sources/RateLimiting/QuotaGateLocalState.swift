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

    /// The (app, API) whose limits the batch counts against.
    var quotaKey: QuotaKey { QuotaKey(app: app, api: api) }
}

/// What a call asking to join a batch is told, at once or by the call that asked for the whole batch.
enum BatchRole<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Nobody is gathering a batch of this key (or its leader was cancelled): this call asks, for itself and
    /// whoever joins meanwhile.
    case lead
    /// Answered by the batch's round trip: the attempt, and when that round trip was asked for.
    case answered(QuotaAttempt, asked: ContinuousClock.Instant)
    /// The (app, API) is blocked in this process until then (a block it could not write): the call waits, then
    /// asks again.
    case blocked(until: Instant)
}

/// The per-process state of a ``PostgresQuotaGate`` that needs no database, for the (app, API) pairs of one shard
/// (``QuotaGateShards``): kept behind a lock so that pacing, local blocks and batching cost no hop to the gate's
/// database thread.
struct QuotaGateLocalState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    typealias Waiter = CheckedContinuation<BatchRole<Instant>, any Error>

    /// Blocks this process learnt but could not write (the database was away), so it at least obeys them itself.
    var localBlocks: [QuotaKey: Instant] = [:]
    /// Spent days this process learnt but could not write.
    var localExhausted: [QuotaKey: PacificDay] = [:]
    /// This process's calls paced by their answers (see ``ArrivalPacer``).
    var pacers: [QuotaKey: ArrivalPacer<Instant>] = [:]
    /// Batches being gathered: the calls waiting for the batch's leader to reach the database thread.
    var gathering: [BatchKey: [Waiter]] = [:]
    /// What the gate has done so far for these pairs.
    var statistics = QuotaGateStatistics()

    /// Joins the batch of `key` being gathered, or starts one, unless the (app, API) is blocked here at `now`: the
    /// block and the batch are looked at in one turn of the lock.
    /// - Returns: the role to resume `waiter` with at once (`lead`, `blocked`), or nil when it waits in the batch.
    mutating func join(_ key: BatchKey, at now: Instant, _ waiter: Waiter) -> BatchRole<Instant>? {
        if let blocked = localBlocks[key.quotaKey], blocked > now { return .blocked(until: blocked) }
        if gathering[key] != nil {
            gathering[key]?.append(waiter)
            statistics.joined += 1
            return nil
        }
        gathering[key] = []
        return .lead
    }

    /// Closes the batch of `key` for its leader.
    /// - Returns: the calls that joined it, and the day this process learnt the store spent (if it did).
    mutating func close(_ key: BatchKey) -> (followers: [Waiter], exhausted: PacificDay?) {
        (gathering.removeValue(forKey: key) ?? [], localExhausted[key.quotaKey])
    }
}
