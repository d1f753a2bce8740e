import AppStoreServerAPI
import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// Apple's "not a supported in-app purchase type" (4000047) to an answer is recorded `not_supported` with its code,
/// as the stores' notes say (record it, skip it), not as a refused answer that fails the run; any other 4xx but 401
/// and 429 is a refusal, a 5xx had no answer (sent again next run), and the rest stop the run.
@Suite("An answer to an unsupported purchase type")
struct UnsupportedPurchaseAnswerTests {
    typealias Requests = RefundRequestAnswererTests

    static func error(_ status: Int, _ code: Int64?, retryable: Bool = false) -> AppStoreServerAPIError {
        AppStoreServerAPIError(
            code: .apiError, message: "Apple said \(status)", httpStatus: status,
            apiErrorCode: code.map { APIErrorCode(rawValue: $0) }, isRetryable: retryable)
    }

    /// The result as text: `unsupported 4000047`, `refused http_400`, `none`.
    static func outcome(_ status: Int, _ code: Int64?, retryable: Bool = false) -> String {
        let error = error(status, code, retryable: retryable)
        return switch AppleRefundRequests.result(of: error) ?? AppleRefundRequests.unreached(error) {
        case .unsupported(let code, _): "unsupported \(code)"
        case .refused(let code, _): "refused \(code)"
        case .later(let code, _): "later \(code)"
        case .unreached(let code, _): "unreached \(code)"
        case .answered: "answered"
        case .missed: "missed"
        case nil: "none"
        }
    }

    @Test func apple4000047IsNotSupportedAndOtherClientErrorsAreRefusals() {
        #expect(Self.outcome(400, 4_000_047) == "unsupported 4000047")
        #expect(Self.outcome(400, 4_000_012) == "refused 4000012")
        #expect(Self.outcome(400, nil) == "refused http_400")
        #expect(Self.outcome(404, 4_040_010) == "refused 4040010")
        #expect(Self.outcome(401, nil) == "none")
        #expect(Self.outcome(429, 4_290_000) == "none")
        // Apple may or may not have taken it: sent again by the next run, the run goes on.
        #expect(Self.outcome(500, 5_000_000) == "unreached 5000000")
        #expect(Self.outcome(503, nil) == "unreached http_503")
        // Apple's "not found, retryable" (the client marks them retryable): asked again next run, not refused.
        for code: Int64 in [4_040_002, 4_040_004, 4_040_006] {
            #expect(Self.outcome(404, code, retryable: true) == "later \(code)")
        }
    }

    /// An answer Apple says to send later is released: the run goes on with the others and ends well, and the next
    /// run sends it.
    @Test func anAnswerToSendLaterIsReleasedAndTheRunGoesOn() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        func answerer(later: Bool) -> RefundRequestAnswerer {
            Requests().makeAnswerer { _, open in
                later && open.request.transactionId == "t001"
                    ? .later(code: "4040006", message: "original transaction id not found, retryable") : .answered
            }
        }
        let environment = Requests().environment(connection)
        let counters = environment.counters
        func rows() throws -> [String] {
            try connection.query(
                """
                SELECT transaction_id || ' ' || coalesce(answer, '-') || ' ' || coalesce(error_code, '-') AS line
                FROM refund_request ORDER BY transaction_id
                """
            ).map { try $0.decode("line", as: String.self) }
        }
        try await answerer(later: true).answerOpen(in: environment)
        #expect(try rows() == ["t001 - -", "t002 answered -"])
        #expect(counters["answers_deferred"] == 1 && counters["answered"] == 1)
        try await answerer(later: false).answerOpen(in: environment)
        #expect(try rows() == ["t001 answered -", "t002 answered -"])
    }

    @Test func anUnsupportedAnswerIsRecordedNotSupportedWithItsCodeAndFailsNothing() async throws {
        let connection = try PostgresConnection(conninfo: try Requests().database(2))
        defer { connection.close() }
        let answerer = RefundRequestAnswerer(
            requests: RefundRequestStore(appId: "ios"), decider: RefundRequestDecider(rules: RefundRequestRules()),
            send: { _, open in
                open.request.transactionId == "t001"
                    ? .unsupported(code: "4000047", message: "not a supported in-app purchase type") : .answered
            })
        let counters = JobCounters()
        let environment = JobEnvironment(
            connection: connection, gate: SimulatorSampleFuzzTests.OpenGate(), counters: counters, runId: nil,
            shutdown: ShutdownSignal(), dryRun: false, logger: Logger(label: "test"), progress: nil,
            now: { Requests.received })
        try await answerer.answerOpen(in: environment)
        let rows = try connection.query(
            """
            SELECT transaction_id || ' ' || answer || ' ' || coalesce(error_code, '-') || ' '
                   || coalesce(decision, '-') AS line
            FROM refund_request ORDER BY transaction_id
            """
        ).map { try $0.decode("line", as: String.self) }
        #expect(rows == ["t001 not_supported 4000047 -", "t002 answered - pending"])
        #expect(counters["requests_not_supported"] == 1)
        #expect(counters["answers_failed"] == 0)
        #expect(counters["answered"] == 1)
    }
}
