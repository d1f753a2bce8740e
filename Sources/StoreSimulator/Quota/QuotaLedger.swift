import Synchronization

/// Counts calls per app and endpoint, grants or refuses each against its rules, and keeps every grant's time so
/// that the statistics (the most calls in any 30 s, any minute, any second, any Pacific day) are exact.
/// Refused calls are counted but take no quota.
final class QuotaLedger: Sendable {
    /// Identifies a counter: an app (with its environment for Apple) and an endpoint.
    struct Key: Hashable, Sendable, Comparable {
        var app: String
        var environment: String?
        var endpoint: SimulatorEndpoint

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.app, lhs.environment ?? "", lhs.endpoint.rawValue) < (
                rhs.app, rhs.environment ?? "", rhs.endpoint.rawValue
            )
        }
    }

    /// The answer to one call.
    enum Decision: Sendable, Equatable {
        case granted
        /// Refused by `rule`; the call could succeed again at `retryAtMillis`.
        case refused(rule: QuotaRule, retryAtMillis: Int64)
    }

    private struct Counter {
        // Grant times, kept sorted (the clock may be set back, so insertion is by search).
        var grants: [Int64] = []
        var refused = 0
        var perDay: [Int64: Int] = [:]

        mutating func record(_ millis: Int64) {
            grants.insert(millis, at: QuotaLedger.upperBound(grants, millis))
            perDay[PacificDay.number(millis: millis), default: 0] += 1
        }
    }

    private let counters = Mutex<[Key: Counter]>([:])
    /// Shared counters (``QuotaRule/pool``), per app and pool.
    private let pools = Mutex<[String: Counter]>([:])

    /// Decides one call at `millis` against `rules`, and records it.
    func admit(_ key: Key, at millis: Int64, rules: [QuotaRule]) -> Decision {
        pools.withLock { pools in
            counters.withLock { counters in
                if let refusal = Self.refusal(key, at: millis, rules: rules, counters: counters, pools: pools) {
                    counters[key, default: Counter()].refused += 1
                    return refusal
                }
                // In place: a counter copied out of its dictionary and written back copied its grant times (thousands
                // for Google's Orders bucket) on every call, under both locks.
                counters[key, default: Counter()].record(millis)
                for pool in Set(rules.compactMap(\.pool)) {
                    pools[Self.poolKey(key, pool), default: Counter()].record(millis)
                }
                return .granted
            }
        }
    }

    /// The first of `rules` that a call at `millis` would break, as the refusal to give.
    private static func refusal(
        _ key: Key, at millis: Int64, rules: [QuotaRule], counters: [Key: Counter], pools: [String: Counter]
    ) -> Decision? {
        for rule in rules {
            let counted = rule.pool.map { pools[poolKey(key, $0)] } ?? counters[key]
            switch rule.window {
            case .rolling(let window):
                if let retryAt = rollingRefusal(counted?.grants ?? [], at: millis, width: window, limit: rule.limit) {
                    return .refused(rule: rule, retryAtMillis: retryAt)
                }
            case .pacificDay:
                let day = PacificDay.number(millis: millis)
                if counted?.perDay[day, default: 0] ?? 0 >= rule.limit {
                    return .refused(rule: rule, retryAtMillis: PacificDay.nextMidnight(after: millis))
                }
            }
        }
        return nil
    }

    private static func poolKey(_ key: Key, _ pool: String) -> String { "\(key.app)|\(pool)" }

    /// Statistics for every counter, sorted by app, environment and endpoint.
    func statistics() -> [EndpointStatistics] {
        let snapshot = counters.withLock { $0 }
        return snapshot.keys.sorted().map { key in
            let counter = snapshot[key]!
            return EndpointStatistics(
                app: key.app, environment: key.environment, endpoint: key.endpoint, granted: counter.grants.count,
                refused: counter.refused,
                maxInAnySecond: Self.maxInWindow(counter.grants, 1000),
                maxInAny30Seconds: Self.maxInWindow(counter.grants, 30_000),
                maxInAnyMinute: Self.maxInWindow(counter.grants, 60_000),
                maxInAnyPacificDay: counter.perDay.values.max() ?? 0,
                grantsPerPacificDay: Dictionary(
                    uniqueKeysWithValues: counter.perDay.map { (PacificDay.date(dayNumber: $0.key), $0.value) }),
                firstGrantMillis: counter.grants.first, lastGrantMillis: counter.grants.last)
        }
    }

    /// The grant times of one counter (ms on the quota clock), oldest first.
    func grantTimes(_ key: Key) -> [Int64] {
        counters.withLock { $0[key]?.grants ?? [] }
    }

    /// The grant times of every counter of `endpoint` (ms on the quota clock, oldest first), sorted by key.
    func grantTimes(of endpoint: SimulatorEndpoint) -> [(key: Key, times: [Int64])] {
        counters.withLock { $0.filter { $0.key.endpoint == endpoint }.map { ($0.key, $0.value.grants) } }
            .sorted { $0.key < $1.key }
    }

    /// The most grants in any half-open window `[t, t + width)`.
    static func maxInWindow(_ sorted: [Int64], _ width: Int64) -> Int {
        var best = 0
        var low = 0
        for high in sorted.indices {
            while sorted[high] - sorted[low] >= width { low += 1 }
            best = max(best, high - low + 1)
        }
        return best
    }

    /// When a call at `millis` would put more than `limit` grants in some window of `width` that holds it: the time
    /// it could fit again; nil when it fits. Calls are stamped when they arrive and admitted in whatever order their
    /// handlers run, so grants stamped later than this call may be recorded already: every window holding the call
    /// is checked, not only the one ending at it.
    static func rollingRefusal(_ grants: [Int64], at millis: Int64, width: Int64, limit: Int) -> Int64? {
        let upper = upperBound(grants, millis)
        var low = upperBound(grants, millis - width)
        if upper - low >= limit {
            // The call fits again once the oldest grant that blocks it leaves the window.
            return grants[upper - limit] + width
        }
        var high = upper
        while high < grants.count, grants[high] < millis + width {
            while grants[low] <= grants[high] - width { low += 1 }
            // The window ending at grants[high] holds grants low...high and this call.
            if high - low + 2 > limit { return grants[high] + 1 }
            high += 1
        }
        return nil
    }

    /// Index of the first element greater than `value`.
    static func upperBound(_ sorted: [Int64], _ value: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] <= value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Forgets every count.
    func reset() {
        counters.withLock { $0.removeAll() }
        pools.withLock { $0.removeAll() }
    }
}
