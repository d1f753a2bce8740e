import Foundation
import Logging
import Postgres
import StoreHTTP
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

/// An answer decided in time whose call cannot leave before the request's deadline (a wait at the quota gate, a
/// retry) is never sent after it: every request of the call carries the deadline, the transport refuses to send past
/// it, and the request is recorded `missed` with no body sent.
@Suite("An answer's deadline at send time")
struct AnswerDeadlineTests {
    typealias Requests = RefundRequestAnswererTests

    @Test func aCallThatCannotLeaveBeforeTheDeadlineIsRecordedMissed() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        let counters = JobCounters()
        // One second before the 12-hour deadline of both requests: they are decided and claimed in time.
        let now = Requests.received.addingTimeInterval(12 * 3600 - 1)
        let answerer = RefundRequestAnswerer(
            requests: RefundRequestStore(appId: "ios"), decider: RefundRequestDecider(rules: RefundRequestRules()),
            send: { _, _ in
                // As a client whose call waits at the gate past the deadline: its request is refused unsent.
                let deadline = try #require(SendDeadline.latest)
                #expect(HTTPRequest(url: URL(string: "http://127.0.0.1/")!).notAfter == deadline)
                try await Task.sleep(until: deadline + .milliseconds(20), clock: .continuous)
                throw TransportError(code: .pastDeadline, request: "POST /x", message: "not sent")
            })
        let environment = JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: counters, runId: nil,
            shutdown: ShutdownSignal(), dryRun: false, logger: Logger(label: "test"), progress: nil, now: { now })
        try await answerer.answerOpen(in: environment)
        let rows = try connection.query(
            """
            SELECT transaction_id || ' ' || answer || ' ' || coalesce(body_sent::text, '-') AS line
            FROM refund_request ORDER BY transaction_id
            """
        ).map { try $0.decode("line", as: String.self) }
        #expect(rows == ["t001 missed -", "t002 missed -"])
        #expect(counters["requests_missed"] == 2)
        #expect(counters["answered"] == 0 && counters["answers_failed"] == 0)
    }

    @Test func theTransportNeverSendsARequestPastItsDeadline() async throws {
        let options = SimulatorOptions(scenario: ScenarioSpec(seed: 3, subscriptions: 10, historyDays: 10))
        try await StoreSimulator.withRunning(options) { simulator in
            let transport = CurlTransport()
            let url = simulator.baseURL.appendingPathComponent(
                "androidpublisher/v3/applications/com.example.demo/purchases/voidedpurchases")
            let late = await SendDeadline.$latest.withValue(.now - .milliseconds(1)) {
                await #expect(throws: TransportError.self) {
                    _ = try await transport.send(HTTPRequest(url: url, timeout: 10))
                }
            }
            #expect(late?.code == .pastDeadline)
            #expect(late?.isRetryable == false)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) == 0)
            let sent = try await SendDeadline.$latest.withValue(.now + .seconds(10)) {
                try await transport.send(HTTPRequest(url: url, timeout: 10))
            }
            #expect(sent.status == 401)
            #expect(simulator.mostInFlight(.googleVoidedPurchases) == 1)
        }
    }
}
