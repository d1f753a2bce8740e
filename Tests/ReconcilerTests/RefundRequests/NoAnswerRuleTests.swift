import Foundation
import Logging
import Postgres
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// A request a rule chose not to answer (`no_answer`) is recorded `missed` once its deadline passes, and keeps the
/// rule that chose so: `status` and the metrics do not count it as missed, while a request simply left unanswered
/// still is.
@Suite("A no_answer rule at the deadline")
struct NoAnswerRuleTests {
    typealias Requests = RefundRequestAnswererTests

    /// The calls the answerer made.
    final class Calls: Sendable {
        let count = Mutex(0)
    }

    /// Answers app `ios`'s open requests at `now` with `rules`, counting the calls.
    func answer(
        _ connection: PostgresConnection, rules: RefundRequestRules, at now: Date, calls: Calls
    ) async throws {
        let answerer = RefundRequestAnswerer(
            requests: RefundRequestStore(appId: "ios"), decider: RefundRequestDecider(rules: rules),
            send: { _, _ in
                calls.count.withLock { $0 += 1 }
                return .answered
            })
        let environment = JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: JobCounters(), runId: nil,
            shutdown: ShutdownSignal(), dryRun: false, logger: Logger(label: "test"), progress: nil, now: { now })
        try await answerer.answerOpen(in: environment)
    }

    func rows(_ connection: PostgresConnection) throws -> [String] {
        try connection.query(
            """
            SELECT transaction_id || ' ' || coalesce(answer, '-') || ' ' || coalesce(rule, '-') || ' '
                   || coalesce(preference, '-') AS line
            FROM refund_request ORDER BY transaction_id
            """
        ).map { try $0.decode("line") }
    }

    @Test func aRequestARuleChoseNotToAnswerIsMissedWithItsRuleAndNotCountedAsMissed() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        // t002 has no facts: nothing decides it before its deadline, so it is missed as any unanswered request.
        try connection.execute("DELETE FROM consumption_fact WHERE purchase_id = 't002'")
        let calls = Calls()
        let silent = RefundRequestRules(rules: [], fallback: .noAnswer)
        try await answer(connection, rules: silent, at: Requests.received, calls: calls)
        #expect(try rows(connection) == ["t001 - default no_answer", "t002 no_facts - -"])

        let late = Requests.received.addingTimeInterval(13 * 3600)
        try await answer(connection, rules: silent, at: late, calls: calls)
        #expect(calls.count.withLock { $0 } == 0)
        #expect(try rows(connection) == ["t001 missed default no_answer", "t002 no_facts - -"])
        // t001, which the rule chose not to answer, is not counted; t002, left without facts, is.
        let status = try RefundRequestStatus.all(now: late, on: connection)
        #expect(status.map(\.status.missedLastDay) == [1])
    }

    @Test func anUndecidedRequestPastItsDeadlineIsCountedAsMissed() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(1))
        defer { connection.close() }
        let calls = Calls()
        let late = Requests.received.addingTimeInterval(13 * 3600)
        try await answer(connection, rules: RefundRequestRules(rules: [], fallback: .decline), at: late, calls: calls)
        #expect(calls.count.withLock { $0 } == 0)
        #expect(try rows(connection) == ["t001 missed - -"])
        #expect(try RefundRequestStatus.all(now: late, on: connection).map(\.status.missedLastDay) == [1])
    }
}
