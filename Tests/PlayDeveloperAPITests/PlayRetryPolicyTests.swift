import Testing

@testable import PlayDeveloperAPI

@Suite struct PlayRetryPolicyTests {
    let policy = PlayRetryPolicy(maxAttempts: 5, budget: 20, initialBackoff: 1, maxBackoff: 8)

    @Test func ceilingDoublesUpToTheCap() {
        let ceilings = (1...6).map { policy.delay(afterAttempt: $0, retryAfter: nil, random: { $0 }) }
        #expect(ceilings == [1, 2, 4, 8, 8, 8])
    }

    @Test func fullJitterSpansZeroToCeiling() {
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: { _ in 0 }) == 0)
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: { $0 / 2 }) == 2)
        // A misbehaving random source cannot exceed the ceiling.
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: { $0 * 10 }) == 4)
    }

    @Test func retryAfterIsAFloor() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: 6, random: { $0 }) == 6)
        #expect(policy.delay(afterAttempt: 4, retryAfter: 2, random: { $0 }) == 8)
    }

    @Test func boundedInCountAndTime() {
        #expect(policy.allowsRetry(afterAttempt: 4, elapsed: 0, delay: 1))
        #expect(!policy.allowsRetry(afterAttempt: 5, elapsed: 0, delay: 1))
        #expect(policy.allowsRetry(afterAttempt: 1, elapsed: 15, delay: 5))
        #expect(!policy.allowsRetry(afterAttempt: 1, elapsed: 15, delay: 5.5))
        #expect(!PlayRetryPolicy.none.allowsRetry(afterAttempt: 1, elapsed: 0, delay: 0))
    }

    @Test func hugeAttemptNumbersDoNotOverflow() {
        #expect(policy.delay(afterAttempt: 10_000, retryAfter: nil, random: { $0 }) == 8)
    }
}
