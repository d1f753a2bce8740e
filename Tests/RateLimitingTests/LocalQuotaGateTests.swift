import RateLimiting
import Synchronization
import Testing

@Suite("LocalQuotaGate")
struct LocalQuotaGateTests {
    static let day = PacificDay(year: 2026, month: 3, day: 8)

    static func policy(_ limit: QuotaLimit, share: Double = 0.5) -> QuotaPolicy {
        QuotaPolicy(defaultLimits: QuotaLimits([.googleVoidedPurchases: limit]), backfillShare: share)
    }

    @Test func callsWaitOnTheClockAndKeepEveryWindow() async throws {
        let clock = ManualClock()
        let limit = QuotaLimit(windows: [RateLimit(30, per: .seconds(30))])
        let gate = LocalQuotaGate(policy: Self.policy(limit), clock: clock, today: { Self.day })
        var grants: [Duration] = []
        for _ in 0..<300 {
            try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
            grants.append(clock.now.offset)
        }
        let times = GrantTimes(grants)
        #expect(times.maximumInAnyClosedWindow(.seconds(30)) == 30)
        // The enforced window is 30 s plus the 250 ms margin.
        let enforced = Duration.milliseconds(30_250)
        #expect(try #require(times.smallestSpan(ofGrants: 30)) >= enforced)
        // Nine more enforced windows, each waited for on the clock (plus at most 20 ms of jitter per wait).
        #expect(clock.now.offset >= enforced * 9)
        #expect(clock.now.offset <= enforced * 9 + .milliseconds(20) * clock.sleptDurations.count)
        #expect(!clock.sleptDurations.isEmpty)
    }

    @Test func theDailyCapThrowsAndBackfillsKeepToTheirShare() async throws {
        let clock = ManualClock()
        let gate = LocalQuotaGate(
            policy: Self.policy(QuotaLimit(windows: [], dailyCap: 10), share: 0.3), clock: clock,
            today: { Self.day })
        for _ in 0..<3 { try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .backfill) }
        await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .backfill)
        }
        for _ in 0..<7 { try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental) }
        await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
        }
        let usage = try #require(await gate.usageToday(app: "a").first { $0.api == .googleVoidedPurchases })
        #expect(usage.used == 10)
        #expect(usage.usedBackfill == 3)
        #expect(usage.heldBack == 2)
        #expect(usage.exhausted)
        // Another app has its own budget.
        try await gate.acquire(app: "b", api: .googleVoidedPurchases, purpose: .incremental)
    }

    @Test func aNewPacificDayStartsANewBudget() async throws {
        let today = Mutex(Self.day)
        let gate = LocalQuotaGate(
            policy: Self.policy(QuotaLimit(windows: [], dailyCap: 1)), clock: ManualClock(),
            today: { today.withLock { $0 } })
        try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
        await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
        }
        today.withLock { $0 = $0.next }
        try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
    }

    @Test func aThrottleBlocksUntilRetryAfterAndThenBacksOff() async throws {
        let clock = ManualClock()
        let gate = LocalQuotaGate(
            policy: Self.policy(QuotaLimit(windows: [RateLimit(100, per: .seconds(1))])), clock: clock,
            today: { Self.day })
        try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
        await gate.report(app: "a", api: .googleVoidedPurchases, feedback: .throttled(retryAfter: 30))
        #expect(await gate.wait(app: "a", api: .googleVoidedPurchases) == .seconds(30))
        try await gate.acquire(app: "a", api: .googleVoidedPurchases, purpose: .incremental)
        #expect(clock.now.offset >= .seconds(30))
        // Without Retry-After: the backoff, at least its base (1 s), its ceiling doubling with each throttle in a
        // row (this is the second and third).
        await gate.report(app: "a", api: .googleVoidedPurchases, feedback: .throttled(retryAfter: nil))
        let second = await gate.wait(app: "a", api: .googleVoidedPurchases)
        #expect(second >= .seconds(1) && second <= .seconds(2))
        await gate.report(app: "a", api: .googleVoidedPurchases, feedback: .throttled(retryAfter: nil))
        let third = await gate.wait(app: "a", api: .googleVoidedPurchases)
        #expect(third >= second && third <= .seconds(4))
        let usage = await gate.usageToday(app: "a").first { $0.api == .googleVoidedPurchases }
        #expect(usage?.throttled == 3)
    }

    @Test func theStoresDailyAnswerStopsTheAPIForTheDay() async throws {
        let gate = LocalQuotaGate(policy: QuotaPolicy(), clock: ManualClock(), today: { Self.day })
        try await gate.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        await gate.report(app: "a", api: .appleRefundHistory, feedback: .dailyQuotaExhausted(sentOn: nil))
        let error = await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        }
        #expect(error?.api == .appleRefundHistory)
        try await gate.acquire(app: "a", api: .appleNotificationHistory, purpose: .incremental)
    }

    @Test func aDailyAnswerToACallSentTheDayBeforeLeavesTodayOpen() async throws {
        let gate = LocalQuotaGate(policy: QuotaPolicy(), clock: ManualClock(), today: { Self.day })
        let yesterday = PacificDay(containing: Self.day.start.addingTimeInterval(-1))
        await gate.report(app: "a", api: .googleOrders, feedback: .dailyQuotaExhausted(sentOn: yesterday))
        try await gate.acquire(app: "a", api: .googleOrders, purpose: .incremental)
        await gate.report(app: "a", api: .googleOrders, feedback: .dailyQuotaExhausted(sentOn: Self.day))
        await #expect(throws: QuotaError.self) {
            try await gate.acquire(app: "a", api: .googleOrders, purpose: .incremental)
        }
    }

    @Test func aCancelledWaitThrows() async throws {
        let gate = LocalQuotaGate(policy: QuotaPolicy(), clock: ManualClock(), today: { Self.day })
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.acquire(app: "a", api: .appleRefundHistory, purpose: .incremental)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
