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
    }

    private let counters = Mutex<[Key: Counter]>([:])
    /// Shared counters (``QuotaRule/pool``), per app and pool.
    private let pools = Mutex<[String: Counter]>([:])

    /// Decides one call at `millis` against `rules`, and records it.
    func admit(_ key: Key, at millis: Int64, rules: [QuotaRule]) -> Decision {
        pools.withLock { pools in
            counters.withLock { counters in
                var counter = counters[key] ?? Counter()
                defer { counters[key] = counter }
                for rule in rules {
                    let counted = rule.pool.map { pools["\(key.app)|\($0)"] ?? Counter() } ?? counter
                    switch rule.window {
                    case .rolling(let window):
                        let upper = Self.upperBound(counted.grants, millis)
                        let lower = Self.upperBound(counted.grants, millis - window)
                        if upper - lower >= rule.limit {
                            counter.refused += 1
                            // The call fits again once the oldest grant that blocks it leaves the window.
                            let blocking = counted.grants[upper - rule.limit]
                            return .refused(rule: rule, retryAtMillis: blocking + window)
                        }
                    case .pacificDay:
                        let day = PacificDay.number(millis: millis)
                        if counted.perDay[day, default: 0] >= rule.limit {
                            counter.refused += 1
                            return .refused(rule: rule, retryAtMillis: PacificDay.nextMidnight(after: millis))
                        }
                    }
                }
                counter.grants.insert(millis, at: Self.upperBound(counter.grants, millis))
                counter.perDay[PacificDay.number(millis: millis), default: 0] += 1
                for pool in Set(rules.compactMap(\.pool)) {
                    var shared = pools["\(key.app)|\(pool)"] ?? Counter()
                    shared.grants.insert(millis, at: Self.upperBound(shared.grants, millis))
                    shared.perDay[PacificDay.number(millis: millis), default: 0] += 1
                    pools["\(key.app)|\(pool)"] = shared
                }
                return .granted
            }
        }
    }

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
