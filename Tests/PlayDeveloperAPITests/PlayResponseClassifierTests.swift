import Foundation
import Testing

@testable import PlayDeveloperAPI

@Suite struct PlayResponseClassifierTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func classify(_ status: Int, _ fixture: String?, headers: [String: String] = [:]) throws
        -> PlayResponseClassifier.Disposition
    {
        let body = try fixture.flatMap { GoogleErrorResponse(json: try Fixtures.data($0)) }
        return PlayResponseClassifier.classify(status: status, headers: headers, body: body, now: now)
    }

    @Test func successIsSuccess() throws {
        #expect(try classify(200, nil) == .success)
    }

    @Test func tooManyRequestsIsThrottledWithRetryAfter() throws {
        #expect(try classify(429, "error-429.json", headers: ["retry-after": "7"]) == .throttled(retryAfter: 7))
        #expect(try classify(429, nil) == .throttled(retryAfter: nil))
    }

    @Test func forbiddenPerDayIsDailyQuota() throws {
        #expect(try classify(403, "error-403-per-day.json") == .dailyQuotaExhausted)
    }

    @Test func forbiddenPer30SecondsIsThrottled() throws {
        #expect(try classify(403, "error-403-per-30s.json") == .throttled(retryAfter: nil))
    }

    @Test func unauthorizedPermissionDeniedIsNotATokenProblem() throws {
        #expect(try classify(401, "error-401-permission.json") == .permissionDenied)
        #expect(try classify(401, "error-401-token.json") == .unauthorized)
        #expect(try classify(401, nil) == .unauthorized)
    }

    @Test func otherForbiddenIsPermissionDenied() throws {
        let body = GoogleErrorResponse(
            error: .init(
                code: 403, message: "denied", status: "PERMISSION_DENIED", errors: [.init(reason: "forbidden")]))
        #expect(PlayResponseClassifier.classify(status: 403, headers: [:], body: body, now: now) == .permissionDenied)
    }

    @Test(arguments: [500, 502, 503, 504, 408])
    func serverErrorsAreRetryable(status: Int) throws {
        #expect(try classify(status, "error-503.json") == .serverError(retryAfter: nil))
    }

    @Test func serverErrorWithHTMLBodyStillRetryable() {
        let body = GoogleErrorResponse(json: Data("<html>Bad Gateway</html>".utf8))
        #expect(body == nil)
        #expect(
            PlayResponseClassifier.classify(status: 502, headers: [:], body: body, now: now)
                == .serverError(retryAfter: nil))
    }

    @Test func notFoundAndOtherClientErrors() throws {
        #expect(try classify(404, "error-404.json") == .notFound)
        #expect(try classify(400, nil) == .clientError)
    }

    @Test func resourceExhaustedStatusIsQuotaWhateverTheCode() {
        let body = GoogleErrorResponse(
            error: .init(code: 403, message: "Queries per day exceeded", status: "RESOURCE_EXHAUSTED"))
        #expect(
            PlayResponseClassifier.classify(status: 403, headers: [:], body: body, now: now) == .dailyQuotaExhausted)
    }

    @Test(
        arguments: [("3", 3.0), ("0", 0), (" 12 ", 12), ("1.5", 1.5), ("-4", nil), ("soon", nil)] as [(String, Double?)]
    )
    func retryAfterSeconds(header: String, seconds: Double?) {
        #expect(PlayResponseClassifier.parseRetryAfter(header, now: now) == seconds)
    }

    @Test func retryAfterHTTPDate() throws {
        let later = now.addingTimeInterval(90)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = try #require(PlayResponseClassifier.parseRetryAfter(formatter.string(from: later), now: now))
        #expect(seconds == 90)
    }
}
