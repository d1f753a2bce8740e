import AppStoreServerAPI
import Foundation
import Logging
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// Apple's "not a supported in-app purchase type" (4000047) to an answer is recorded `not_supported` with its code,
/// as the stores' notes say (record it, skip it), not as a refused answer that fails the run; any other 4xx but 401
/// and 429 is a refusal, and the rest did not reach Apple.
@Suite("An answer to an unsupported purchase type")
struct UnsupportedPurchaseAnswerTests {
    typealias Requests = RefundRequestAnswererTests

    static func error(_ status: Int, _ code: Int64?) -> AppStoreServerAPIError {
        AppStoreServerAPIError(
            code: .apiError, message: "Apple said \(status)", httpStatus: status,
            apiErrorCode: code.map { APIErrorCode(rawValue: $0) })
    }

    /// The result as text: `unsupported 4000047`, `refused http_400`, `none`.
    static func outcome(_ status: Int, _ code: Int64?) -> String {
        switch AppleRefundRequests.result(of: error(status, code)) {
        case .unsupported(let code, _): "unsupported \(code)"
        case .refused(let code, _): "refused \(code)"
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
        #expect(Self.outcome(500, 5_000_000) == "none")
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
