import RateLimiting
import Testing

@Suite("QuotaBucket")
struct QuotaBucketTests {
    typealias Instant = ManualClock.Instant

    /// Limits to check; `original` are the windows the enforced ones must imply (the stores' own).
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var limit: QuotaLimit

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "30/30s, 250 ms margin", limit: QuotaLimit(windows: [RateLimit(30, per: .seconds(30))])),
        Case(name: "10/1s, no margin", limit: QuotaLimit(windows: [RateLimit(10, per: .seconds(1), margin: .zero)])),
        Case(name: "Google voided, published", limit: QuotaLimits.published[.googleVoidedPurchases]!),
        Case(
            name: "5/1s + 20/10s, no margin",
            limit: QuotaLimit(windows: [
                RateLimit(5, per: .seconds(1), margin: .zero), RateLimit(20, per: .seconds(10), margin: .zero),
            ])),
        Case(name: "3000/60s, split", limit: QuotaLimit(windows: [RateLimit(3000, per: .seconds(60))])),
        Case(
            name: "Apple refund history, sandbox",
            limit: QuotaLimits.published(appleSandbox: true)[.appleRefundHistory]!),
    ]

    /// Attempts at random times, in phases: bursts, a backlog (callers that come back exactly when told), steady
    /// asking and idle periods, with the odd store block. Returns the grant times.
    static func run(_ limit: QuotaLimit, seed: UInt64, attempts: Int) -> (grants: [Duration], refused: Int) {
        var generator = SeededGenerator(seed: seed)
        var bucket = QuotaBucket<ManualClock>(limit: limit)
        let shortest = bucket.windows.map(\.window).min() ?? .seconds(1)
        let longest = bucket.windows.map(\.enforcedWindow).max() ?? .seconds(1)
        let phaseLength = 3 * max(bucket.logLength, 1)
        var now = Duration.zero
        var grants: [Duration] = []
        var refused = 0
        var lastWait = Duration.zero
        var phase = 0
        var left = 0
        for _ in 0..<attempts {
            if left == 0 {
                phase = Int.random(in: 0..<4, using: &generator)
                left = phase == 3 ? 1 : Int.random(in: 1...phaseLength, using: &generator)
            }
            left -= 1
            switch phase {
            case 0: now += .microseconds(Int.random(in: 0...200, using: &generator))
            case 1: now += lastWait > .zero ? lastWait : .microseconds(Int.random(in: 0...50, using: &generator))
            case 2: now += shortest * Double.random(in: 0...0.3, using: &generator)
            default: now += longest * Double.random(in: 0...3, using: &generator)
            }
            if Int.random(in: 0..<1000, using: &generator) == 0 {
                bucket.block(until: Instant(offset: now + shortest * Double.random(in: 0...2, using: &generator)))
            }
            lastWait = bucket.take(at: Instant(offset: now))
            if lastWait == .zero {
                grants.append(now)
            } else {
                refused += 1
            }
        }
        return (grants, refused)
    }

    @Test(arguments: cases, [1, 2, 3] as [UInt64])
    func noWindowEverHoldsMoreThanItsCount(_ testCase: Case, seed: UInt64) {
        let (grants, refused) = Self.run(testCase.limit, seed: seed, attempts: 20_000)
        let times = GrantTimes(grants)
        #expect(refused > 0, "the schedule must press against the limits")
        #expect(grants.count > 100)
        // The enforced windows, and every window the store publishes, hold in every interval.
        let bucket = QuotaBucket<ManualClock>(limit: testCase.limit)
        for window in bucket.windows + testCase.limit.windows {
            #expect(times.maximumInAnyHalfOpenWindow(window.enforcedWindow) <= window.count, "\(window)")
            if let span = times.smallestSpan(ofGrants: window.count) {
                #expect(span >= window.enforcedWindow, "\(window): \(window.count + 1) grants within \(span)")
            }
            if window.margin > .zero {
                #expect(times.maximumInAnyClosedWindow(window.window) <= window.count, "\(window) closed")
            }
        }
        // At least one window was filled: the check above had something to catch.
        let filled = bucket.windows.contains { times.maximumInAnyHalfOpenWindow($0.enforcedWindow) == $0.count }
        #expect(filled)
    }

    /// The same schedule through a classic token bucket (capacity n, refilled at n per w) breaks "n in any w":
    /// the check above would catch a limiter built that way.
    @Test func aClassicTokenBucketFailsTheSameCheck() {
        let window = RateLimit(30, per: .seconds(30), margin: .zero)
        var tokens = 30.0
        var refilledAt = Duration.zero
        var grants: [Duration] = []
        var now = Duration.zero
        for step in 0..<200 {
            now = step < 30 ? .zero : .seconds(29) + .milliseconds((step - 30) * 5)
            tokens = min(30, tokens + (now - refilledAt).secondsValue * 30 / 30)
            refilledAt = now
            if tokens >= 1 {
                tokens -= 1
                grants.append(now)
            }
        }
        #expect(GrantTimes(grants).maximumInAnyHalfOpenWindow(window.window) > window.count)
    }

    @Test(arguments: [
        RateLimit(30, per: .seconds(30)), RateLimit(10, per: .seconds(1)), RateLimit(20, per: .seconds(2)),
        RateLimit(7, per: .milliseconds(700), margin: .zero),
    ])
    func aBacklogGetsEveryGrantTheRuleAllows(_ limit: RateLimit) {
        var bucket = QuotaBucket<ManualClock>(windows: [limit])
        var now = Duration.zero
        var grants: [Duration] = []
        let cycles = 50
        let horizon = limit.enforcedWindow * cycles
        var asked = 0
        while now <= horizon && asked < 100_000 {
            asked += 1
            let wait = bucket.take(at: Instant(offset: now))
            if wait == .zero { grants.append(now) } else { now += wait }
        }
        // n at once, then n more every window + margin: exactly n per enforced window, never an idle slot.
        #expect(grants.filter { $0 <= horizon }.count == limit.count * (cycles + 1))
        let rate = GrantTimes(grants).sustainedRate(burst: limit.count) ?? 0
        #expect(abs(rate - limit.sustainedRate) < 1e-9)
        #expect(GrantTimes(grants).maximumInAnyHalfOpenWindow(limit.enforcedWindow) == limit.count)
    }

    @Test func aBlockHoldsEveryCallUntilItEnds() {
        var bucket = QuotaBucket<ManualClock>(windows: [RateLimit(10, per: .seconds(1))])
        #expect(bucket.take(at: Instant(offset: .zero)) == .zero)
        bucket.block(until: Instant(offset: .seconds(5)))
        bucket.block(until: Instant(offset: .seconds(2)))  // never shortens a block
        #expect(bucket.take(at: Instant(offset: .seconds(1))) == .seconds(4))
        #expect(bucket.take(at: Instant(offset: .seconds(5))) == .zero)
        #expect(bucket.grants.map(\.offset) == [.zero, .seconds(5)])
    }

    @Test func theLogKeepsOnlyTheLargestCount() {
        var bucket = QuotaBucket<ManualClock>(windows: [
            RateLimit(3, per: .seconds(1), margin: .zero), RateLimit(5, per: .seconds(10), margin: .zero),
        ])
        var now = Duration.zero
        for _ in 0..<40 {
            let wait = bucket.take(at: Instant(offset: now))
            now += wait == .zero ? .milliseconds(1) : wait
        }
        #expect(bucket.logLength == 5)
        #expect(bucket.grants.count == 5)
    }

    @Test func withoutWindowsOnlyABlockWaits() {
        var bucket = QuotaBucket<ManualClock>(windows: [])
        for _ in 0..<1000 { #expect(bucket.take(at: Instant(offset: .zero)) == .zero) }
        #expect(bucket.grants.isEmpty)
    }
}
