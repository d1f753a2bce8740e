import StoreHTTP
import Testing

@Suite struct RetryPolicyTests {
    struct Flaky: Error { var retryable = true }

    @Test func ceilingsDoubleUpToTheMaximum() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.5, maxDelay: 5, maxTotalTime: 1000)
        #expect((1...6).map(policy.delayCeiling(forRetry:)) == [0.5, 1, 2, 4, 5, 5])
    }

    @Test func fullJitterDrawsFromZeroToTheCeiling() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 100, maxTotalTime: 1000)
        var ranges: [ClosedRange<Double>] = []
        for attempt in 1...4 {
            let wait = policy.delay(afterAttempt: attempt, elapsed: 0) { range in
                ranges.append(range)
                return range.upperBound
            }
            #expect(wait == policy.delayCeiling(forRetry: attempt))
        }
        #expect(ranges == [0...1, 0...2, 0...4, 0...8])
        #expect(policy.delay(afterAttempt: 1, elapsed: 0) { $0.lowerBound } == 0)
    }

    @Test func attemptsAreBounded() {
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 1, maxDelay: 10, maxTotalTime: 1000)
        #expect(policy.delay(afterAttempt: 2, elapsed: 0) { $0.upperBound } != nil)
        #expect(policy.delay(afterAttempt: 3, elapsed: 0) { $0.upperBound } == nil)
        #expect(RetryPolicy.none.delay(afterAttempt: 1, elapsed: 0) { $0.upperBound } == nil)
    }

    @Test func totalTimeIsBounded() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 4, maxDelay: 10, maxTotalTime: 20)
        #expect(policy.delay(afterAttempt: 1, elapsed: 15) { $0.upperBound } == 4)
        #expect(policy.delay(afterAttempt: 1, elapsed: 17) { $0.upperBound } == nil)
    }

    @Test func retryAfterRaisesTheWaitAndTooLongGivesUp() {
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 30, maxTotalTime: 100)
        #expect(policy.delay(afterAttempt: 1, elapsed: 0, retryAfter: 12) { $0.upperBound } == 12)
        #expect(policy.delay(afterAttempt: 1, elapsed: 0, retryAfter: 0.1) { $0.upperBound } == 1)
        #expect(policy.delay(afterAttempt: 1, elapsed: 0, retryAfter: 31) { $0.upperBound } == nil)
    }

    @Test func runRetriesRetryableErrorsWithoutSleeping() async throws {
        let manual = ManualTiming(fraction: 1)
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: 1, maxDelay: 10, maxTotalTime: 100)
        var attempts: [Int] = []
        let result = try await policy.run(timing: manual.timing, isRetryable: { $0 is Flaky }) { attempt in
            attempts.append(attempt)
            if attempt < 3 { throw Flaky() }
            return "done"
        }
        #expect(result == "done")
        #expect(attempts == [1, 2, 3])
        #expect(manual.sleeps == [1, 2])
    }

    @Test func runGivesUpAfterMaxAttemptsWithTheLastError() async {
        let manual = ManualTiming(fraction: 0.5)
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 2, maxDelay: 10, maxTotalTime: 100)
        var count = 0
        await #expect(throws: Flaky.self) {
            try await policy.run(timing: manual.timing, isRetryable: { _ in true }) { _ -> Int in
                count += 1
                throw Flaky()
            }
        }
        #expect(count == 3)
        #expect(manual.sleeps == [1, 2])
        #expect(manual.ranges == [0...2, 0...4])
    }

    @Test func runDoesNotRetryOtherErrors() async {
        let manual = ManualTiming()
        var count = 0
        await #expect(throws: Flaky.self) {
            try await RetryPolicy().run(timing: manual.timing, isRetryable: { ($0 as? Flaky)?.retryable ?? false }) {
                _ -> Int in
                count += 1
                throw Flaky(retryable: false)
            }
        }
        #expect(count == 1)
        #expect(manual.sleeps.isEmpty)
    }

    @Test func runStopsWhenTheTotalTimeIsSpent() async {
        let manual = ManualTiming(fraction: 1)
        let policy = RetryPolicy(maxAttempts: 100, baseDelay: 1, maxDelay: 8, maxTotalTime: 20)
        var count = 0
        await #expect(throws: Flaky.self) {
            try await policy.run(timing: manual.timing, isRetryable: { _ in true }) { _ -> Int in
                count += 1
                throw Flaky()
            }
        }
        // Waits 1, 2, 4, 8 (15 s); the next 8 would pass 20 s.
        #expect(manual.sleeps == [1, 2, 4, 8])
        #expect(count == 5)
    }
}
