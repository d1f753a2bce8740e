/// Checks on a list of grant times (offsets on one clock), the same for the pure bucket and for the database's
/// recorded grants.
struct GrantTimes {
    /// Sorted grant times.
    let times: [Duration]

    init(_ times: [Duration]) { self.times = times.sorted() }

    /// The most grants in any half-open interval [s, s + window). The maximum is reached by an interval starting
    /// at a grant, so checking those is checking every interval.
    func maximumInAnyHalfOpenWindow(_ window: Duration) -> Int {
        maximum { start, time in time < start + window }
    }

    /// The most grants in any closed interval [s, s + window].
    func maximumInAnyClosedWindow(_ window: Duration) -> Int {
        maximum { start, time in time <= start + window }
    }

    /// The smallest span of any `count + 1` successive grants, or `nil` when there are not that many.
    func smallestSpan(ofGrants count: Int) -> Duration? {
        guard times.count > count else { return nil }
        return (0..<(times.count - count)).map { times[$0 + count] - times[$0] }.min()
    }

    /// The rate after the first burst: (grants − burst) / (last − first), in grants per second.
    func sustainedRate(burst: Int) -> Double? {
        guard times.count > burst, let first = times.first, let last = times.last, last > first else { return nil }
        return Double(times.count - burst) / (last - first).secondsValue
    }

    private func maximum(_ inside: (Duration, Duration) -> Bool) -> Int {
        var best = 0
        var end = 0
        for start in times.indices {
            if end < start { end = start }
            while end < times.count, inside(times[start], times[end]) { end += 1 }
            best = max(best, end - start)
        }
        return best
    }
}

extension Duration {
    var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// A small deterministic generator (SplitMix64), so a failing random schedule can be replayed from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
