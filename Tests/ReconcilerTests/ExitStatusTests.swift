import AppStoreServerAPI
import PlayDeveloperAPI
import Postgres
import RateLimiting
import Reconciler
import StoreHTTP
import Testing

/// One map from failure to exit code: every failure class, whichever command or job meets it.
@Suite("exit codes are decided in one place")
struct ExitStatusTests {
    static let cases: [(String, any Error, Int32)] = [
        ("configuration", ReconcilerError(.configuration, "x"), 78),
        ("usage", ReconcilerError(.usage, "x"), 64),
        ("bad input data", ReconcilerError(.input, "x"), 1),
        ("migration", ReconcilerError(.migration, "x"), 1),
        ("temporary", ReconcilerError(.temporary, "x"), 75),
        ("quota held back", QuotaError(app: "a", api: .googleVoidedPurchases, reason: "cap"), 75),
        ("Google key file", PlayAPIError(.keyFile, "x"), 78),
        ("Google invalid_grant", PlayAPIError(.invalidGrant, "x"), 78),
        ("Google 401", PlayAPIError(.unauthenticated, "x", httpStatus: 401), 78),
        ("Google permission", PlayAPIError(.permissionDenied, "x", httpStatus: 403), 78),
        ("Google throttled", PlayAPIError(.rateLimited, "x", httpStatus: 429), 75),
        ("Google daily quota", PlayAPIError(.dailyQuotaExhausted, "x"), 75),
        ("Google 5xx", PlayAPIError(.serverError, "x", httpStatus: 503), 75),
        ("Google malformed answer", PlayAPIError(.malformedResponse, "x"), 1),
        ("Apple key", AppStoreServerAPIError(code: .privateKey, message: "x"), 78),
        ("Apple 401", AppStoreServerAPIError(code: .apiError, message: "x", httpStatus: 401), 78),
        ("Apple 5xx", AppStoreServerAPIError(code: .apiError, message: "x", httpStatus: 503, isRetryable: true), 75),
        ("Apple 400", AppStoreServerAPIError(code: .apiError, message: "x", httpStatus: 400), 1),
        ("Apple forged payload", AppStoreServerAPIError(code: .invalidSignature, message: "x"), 1),
        ("store timeout", TransportError(code: .timeout, request: "GET /", message: "x"), 75),
        ("database refused", PostgresError(code: .connectionFailed, operation: "connect", message: "x"), 75),
        ("database lost", PostgresError(code: .connectionLost, operation: "query", message: "x"), 75),
        ("database settings", PostgresError(code: .badSettings, operation: "connect", message: "x"), 78),
        ("database missing", PostgresError(code: .server, operation: "q", sqlState: "3D000", message: "x"), 78),
        ("password refused", PostgresError(code: .server, operation: "q", sqlState: "28P01", message: "x"), 78),
        ("not authorised", PostgresError(code: .server, operation: "q", sqlState: "28000", message: "x"), 78),
        ("serialization", PostgresError(code: .server, operation: "q", sqlState: "40001", message: "x"), 75),
        ("constraint", PostgresError(code: .server, operation: "q", sqlState: "23505", message: "x"), 1),
    ]

    @Test(arguments: cases.indices)
    func everyFailureClassHasOneCode(_ index: Int) {
        let (name, error, expected) = Self.cases[index]
        #expect(ExitStatus.classify(error).code == expected, "\(name)")
        #expect(JobRunner.classify(error).0 == expected, "\(name): the job runner uses the same map")
        #expect(!ExitStatus.classify(error).line.contains("\n"))
    }

    @Test func theWorstOutcomeWins() {
        #expect(ExitStatus.worst([0, 75, 78, 1]) == 1)
        #expect(ExitStatus.worst([0, 75, 78]) == 78)
        #expect(ExitStatus.worst([75, 0]) == 75)
        #expect(ExitStatus.worst([0, 0]) == 0)
        #expect(ExitStatus.worst([]) == 0)
    }

    @Test func aMultiLineMessageBecomesOneLine() {
        let error = PostgresError(code: .server, operation: "q", message: "first line\n\tsecond\r\nthird")
        #expect(ExitStatus.classify(error).line == "postgres q failed: first line second third")
    }
}

/// Durations accept exactly the documented units; anything else is refused with a reason, never read as seconds.
@Suite("durations are strict")
struct StrictDurationTests {
    @Test(arguments: [("90s", 90), ("30m", 1800), ("72h", 259_200), ("2d", 172_800), ("1w", 604_800)])
    func documentedUnits(_ text: String, _ seconds: Int64) {
        #expect(ConfigDuration(text: text)?.seconds == seconds)
    }

    @Test(arguments: ["3x", "72H", "72", "1y", "", "h", "-5h", "+5h", " 5h", "5 h", "1.5h", "5hh", "٣h"])
    func anythingElseIsRefused(_ text: String) {
        #expect(ConfigDuration(text: text) == nil, "\(text)")
        guard case .failure(let error) = ConfigDuration.parse(text) else { return }
        #expect(error.message.contains("such as 90s, 30m, 72h, 2d or 1w"))
    }

    @Test func outOfRangeSaysSo() throws {
        for text in ["3651d", "99999999999999999999h", "522w"] {
            guard case .failure(let error) = ConfigDuration.parse(text) else {
                Issue.record("\(text) accepted")
                continue
            }
            #expect(error.message.contains("out of range"), "\(text): \(error.message)")
        }
        #expect(ConfigDuration(text: "3650d") == ConfigDuration(seconds: 315_360_000))
    }

    @Test(arguments: ["recheck: { lead: 72 }\n", "recheck: { lag: 3x }\n", "sync: { googleOverlap: 1H }\n"])
    func theConfigurationFileRefusesThemWithExit78(_ text: String) {
        let error = #expect(throws: ReconcilerError.self) {
            try ConfigurationLoader(environment: [:]).load(text: text, source: "c.yaml")
        }
        #expect(error?.exitCode == 78)
        #expect(error?.message.contains("s, m, h, d or w") == true, "\(error?.message ?? "")")
    }
}
