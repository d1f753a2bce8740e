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

    /// SIGTERM while waiting (`nightly.onLocked: wait`): the wait ends at once with exit 75's error, the job never
    /// runs (it used to wait for the lock or the app's deadline, hours, until systemd killed the process).
    @Test func aWaitForTheLockEndsWhenAStopIsRequested() async throws {
        let conninfo = try TestDatabase.create(prefix: "joblock")
        let other = try PostgresConnection(conninfo: conninfo)
        #expect(try other.tryAdvisoryLock(JobLock.key(job: "recheck", app: "a")))
        let shutdown = ShutdownSignal()
        let ran = Flag()
        let error = await #expect(throws: ReconcilerError.self) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try await JobLock.withLock(
                        job: "recheck", app: "a", wait: true, shutdown: shutdown,
                        on: try PostgresConnection(conninfo: conninfo)
                    ) { ran.set() }
                }
                shutdown.request()
                try await group.waitForAll()
            }
        }
        #expect(error?.exitCode == 75)
        #expect(error?.message.contains("while waiting for the recheck lock") == true)
        #expect(!ran.isSet)
    }
}
