import Foundation
import Postgres
import TestSupport
import Testing

@Suite("PostgresConnection failures")
struct PostgresFailureTests {
    @Test func refusedConnectionIsAClearErrorWithoutThePassword() throws {
        let directory = "/tmp/storerecon-no-server-\(UInt32.random(in: 0...UInt32.max))"
        let conninfo = "host=\(directory) port=5999 user=someone password=hunter2-secret dbname=x connect_timeout=2"
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
        #expect(error?.code == .connectionFailed)
        #expect(error?.operation == "connect")
        #expect(error?.description.contains("hunter2-secret") == false)
        #expect(error?.description.contains(directory) == true)
    }

    @Test func uriWithPasswordNeverLeaksIt() throws {
        let conninfo = "postgresql://user:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2"
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
        #expect(error?.description.contains("s3cr3t-pw") == false)
    }

    @Test func malformedConninfoIsAnError() throws {
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(conninfo: "host=/tmp nosuchkeyword=1 password=abc")
        }
        #expect(error?.code == .badSettings)
        #expect(error?.description.contains("nosuchkeyword") == true)
    }

    @Test func serverKilledMidQueryIsAnErrorNotAHang() async throws {
        let conninfo = try TestDatabase.create(prefix: "pgkill")
        let marker = "storerecon_kill_\(UInt32.random(in: 0...UInt32.max))"
        let outcome = try await withThrowingTaskGroup(of: PostgresError?.self) { group in
            group.addTask {
                let victim = try PostgresConnection(conninfo: conninfo)
                do {
                    try victim.query("SELECT pg_sleep(30), $1::text", [marker])
                    return nil
                } catch let error as PostgresError {
                    #expect(victim.isOpen == false)
                    // Every later call fails cleanly too.
                    let again = #expect(throws: PostgresError.self) { try victim.query("SELECT 1") }
                    #expect(again?.code == .connectionLost)
                    return error
                }
            }
            group.addTask {
                let killer = try PostgresConnection(conninfo: conninfo)
                // Up to 25 s (the victim sleeps 30): a loaded host may start its query late.
                for _ in 0..<1000 {
                    let killed = try killer.query(
                        """
                        SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
                        WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()
                        """)[0]
                    if try killed.decode("n", as: Int.self) > 0 { return nil }
                    try await Task.sleep(for: .milliseconds(25))
                }
                Issue.record("the sleeping query never appeared")
                return nil
            }
            var found: PostgresError?
            for try await result in group { found = found ?? result }
            return found
        }
        let error = try #require(outcome)
        #expect(error.code == .connectionLost)
        #expect(error.isRetryable)
    }
}
