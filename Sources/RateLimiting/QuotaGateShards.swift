import Postgres

/// A ``PostgresQuotaGate``'s local state split by (app, API) over a fixed number of locks.
///
/// Every store call touches this state three or four times (pacing, joining a batch, closing it, its answer), and
/// the apps of a job run side by side: behind one lock their calls queued for each other (and, as answers come back
/// in bursts, woke each other) though they never share a key. A key's state is all in one shard, so each touch is
/// still one turn of one lock.
struct QuotaGateShards<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Shards: a power of two, several times the apps that usually run at once.
    static var count: Int { 16 }

    private let shards: [SleepingMutex<QuotaGateLocalState<Instant>>]

    /// Empty state.
    init() {
        shards = (0..<Self.count).map { _ in SleepingMutex(QuotaGateLocalState()) }
    }

    /// The lock holding `key`'s state.
    subscript(key: QuotaKey) -> SleepingMutex<QuotaGateLocalState<Instant>> {
        shards[key.hashValue & (Self.count - 1)]
    }

    /// The lock holding `key`'s state.
    subscript(key: BatchKey) -> SleepingMutex<QuotaGateLocalState<Instant>> {
        self[key.quotaKey]
    }

    /// A lock for what belongs to no key (reconnections).
    var anyKey: SleepingMutex<QuotaGateLocalState<Instant>> { shards[0] }

    /// The statistics of every shard together.
    var statistics: QuotaGateStatistics {
        shards.reduce(into: QuotaGateStatistics()) { total, shard in
            total.add(shard.withLock { $0.statistics })
        }
    }
}
