import Postgres
import Reconciler
import Synchronization
import TestSupport
import Testing

/// `nightly.onLocked`: a job whose lock another session holds is skipped, or waits for it without blocking a thread,
/// and its wait ends when its task is cancelled (the app's deadline).
@Suite("JobLock")
struct JobLockTests {
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    static func until(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func skipReturnsAtOnceAndWaitGetsTheLockWhenItIsReleased() async throws {
        let conninfo = try TestDatabase.create(prefix: "joblock")
        let other = try PostgresConnection(conninfo: conninfo)
        let key = JobLock.key(job: "google_voided", app: "a")
        #expect(try other.tryAdvisoryLock(key))
        let skipped = try await JobLock.withLock(
            job: "google_voided", app: "a", wait: false, on: try PostgresConnection(conninfo: conninfo)
        ) { true }
        #expect(skipped == nil)
        let entered = Flag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let mine = try PostgresConnection(conninfo: conninfo)
                _ = try await JobLock.withLock(job: "google_voided", app: "a", wait: true, on: mine) {
                    entered.set()
                }
            }
            // The waiter asks again every half second; it cannot enter while the other session holds the lock.
            try await Task.sleep(for: .milliseconds(600))
            #expect(!entered.isSet)
            #expect(try other.advisoryUnlock(key))
            try await group.waitForAll()
        }
        #expect(entered.isSet)
    }

    @Test func aWaitForTheLockEndsWhenCancelled() async throws {
        let conninfo = try TestDatabase.create(prefix: "joblock")
        let other = try PostgresConnection(conninfo: conninfo)
        #expect(try other.tryAdvisoryLock(JobLock.key(job: "recheck", app: "a")))
        let asked = Flag()
        let outcome = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                do {
                    let mine = try PostgresConnection(conninfo: conninfo)
                    asked.set()
                    _ = try await JobLock.withLock(job: "recheck", app: "a", wait: true, on: mine) {}
                    return nil
                } catch {
                    return error
                }
            }
            try? await Self.until { asked.isSet }
            group.cancelAll()
            return await group.next() ?? nil
        }
        #expect(outcome is CancellationError)
    }
}
