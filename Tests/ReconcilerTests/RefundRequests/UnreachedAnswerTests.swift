import AppStoreServerAPI
import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// A call the store did not answer after the client's retries (a server error, a timeout) is released and sent
/// again by the next run; the run goes on with the other requests, nearest deadline first, unless so many calls go
/// unanswered that the store is down (then the run stops, exit 75, and nothing is recorded as answered).
@Suite("An answer without the store's answer")
struct UnreachedAnswerTests {
    typealias Requests = RefundRequestAnswererTests

    static func rows(_ connection: PostgresConnection) throws -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: try connection.query(
                """
                SELECT transaction_id, coalesce(answer, '-') || ' ' || (sending_since IS NOT NULL)::text AS state
                FROM refund_request
                """
            ).map { (try $0.decode("transaction_id", as: String.self), try $0.decode("state", as: String.self)) })
    }

    @Test func oneUnansweredCallHoldsBackNoOtherRequest() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(60))
        defer { connection.close() }
        let failing = Requests.transaction(1)
        let environment = Requests().environment(connection)
        try await Requests().makeAnswerer { _, open in
            open.request.transactionId == failing
                ? .unreached(code: "5000000", message: "An unknown error occurred.") : .answered
        }.answerOpen(in: environment)
        let rows = try Self.rows(connection)
        #expect(rows[failing] == "- false", "released, not claimed")
        #expect(rows.filter { $0.value.hasPrefix("answered ") }.count == 59, "\(rows)")
        #expect(environment.counters["answers_unreached"] == 1 && environment.counters["answered"] == 59)
        // The next run sends it.
        try await Requests().makeAnswerer { _, _ in .answered }.answerOpen(in: environment)
        #expect(try Self.rows(connection)[failing]?.hasPrefix("answered ") == true)
    }

    @Test func aStoreThatAnswersNothingStopsTheRunWithNothingRecordedAsAnswered() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(100))
        defer { connection.close() }
        let environment = Requests().environment(connection)
        let calls = Atomic<Int>(0)
        await #expect {
            try await Requests().makeAnswerer { _, _ in
                calls.add(1, ordering: .relaxed)
                return .unreached(code: "transport", message: "timed out")
            }
            .answerOpen(in: environment)
        } throws: { error in
            (error as? ReconcilerError)?.code == .temporary
        }
        let rows = try Self.rows(connection)
        #expect(rows.values.allSatisfy { $0 == "- false" }, "\(rows)")
        let unreached = environment.counters["answers_unreached"]
        #expect(unreached >= RefundRequestAnswerer.maxUnreached && unreached < 100, "\(unreached)")
        // Every call without an answer is counted and logged, those that ended after the one that stopped the run too.
        #expect(unreached == calls.load(ordering: .relaxed))
    }

    @Test func aCallUnansweredUntilPastItsDeadlineIsRecordedMissed() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(1))
        defer { connection.close() }
        // Half a second before Apple's 12 hours end: the call's retries outlast the deadline.
        let late = Requests.received.addingTimeInterval(12 * 3600 - 0.5)
        let environment = JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: JobCounters(), runId: nil,
            shutdown: ShutdownSignal(), dryRun: false, logger: Logger(label: "test"), progress: nil, now: { late })
        try await Requests().makeAnswerer { _, _ in
            try await Task.sleep(for: .seconds(1))
            return .unreached(code: "transport", message: "timed out")
        }.answerOpen(in: environment)
        let rows = try Self.rows(connection)
        // Recorded missed, not released for a next run that could only miss it; when the call left is kept.
        #expect(rows[Requests.transaction(1)] == "missed true", "\(rows)")
        #expect(environment.counters["answers_unreached"] == 0)
    }
}
