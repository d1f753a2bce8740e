import RateLimiting
import Testing

@Suite("Backoff")
struct BackoffTests {
    let backoff = Backoff(base: .seconds(1), maximum: .seconds(60))

    @Test(arguments: [(1, 1), (2, 2), (3, 4), (6, 32), (7, 60), (1000, 60), (0, 1), (-5, 1)])
    func theCeilingDoublesUpToTheMaximum(attempt: Int, seconds: Int) {
        #expect(backoff.ceiling(attempt: attempt) == .seconds(seconds))
    }

    @Test func waitsLieBetweenTheBaseAndTheCeiling() {
        var generator = SeededGenerator(seed: 7)
        for attempt in 1...10 {
            var seen: [Duration] = []
            for _ in 0..<200 {
                let delay = backoff.delay(attempt: attempt, using: &generator)
                #expect(delay >= backoff.base && delay <= backoff.ceiling(attempt: attempt))
                seen.append(delay)
            }
            if attempt > 1 { #expect(Set(seen).count > 100, "the wait is jittered") }
        }
        #expect(backoff.delay(attempt: 3, fraction: 0) == .seconds(1))
        #expect(backoff.delay(attempt: 3, fraction: 1) == .seconds(4))
        #expect(backoff.delay(attempt: 3, fraction: 0.5) == .milliseconds(2500))
    }

    @Test func jitterStaysSmall() {
        let policy = QuotaPolicy(maximumWaitJitter: .milliseconds(20))
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<100 {
            let long = policy.jittered(.seconds(10), using: &generator)
            #expect(long >= .seconds(10) && long <= .seconds(10) + .milliseconds(20))
            let short = policy.jittered(.milliseconds(10), using: &generator)
            #expect(short >= .milliseconds(10) && short <= .milliseconds(12))
        }
        #expect(policy.jittered(.zero, using: &generator) == .zero)
    }
}
