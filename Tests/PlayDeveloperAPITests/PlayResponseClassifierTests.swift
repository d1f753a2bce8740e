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

    @Test func dailyLimitExceededIsTheDayNotAPermission() throws {
        #expect(try classify(403, "error-403-daily-limit.json") == .dailyQuotaExhausted)
        // The reason alone says it, whatever the message.
        let bare = GoogleErrorResponse(
            error: .init(code: 403, message: "denied", status: nil, errors: [.init(reason: "dailyLimitExceeded")]))
        #expect(
            PlayResponseClassifier.classify(status: 403, headers: [:], body: bare, now: now) == .dailyQuotaExhausted)
    }

    @Test func errorInfoNamingADailyLimitIsTheDay() throws {
        #expect(try classify(429, "error-429-errorinfo-per-day.json") == .dailyQuotaExhausted)
        #expect(try classify(403, "error-429-errorinfo-per-day.json") == .dailyQuotaExhausted)
        // An ErrorInfo reason alone, without "per day" anywhere, is quota on a 403 (not a permission problem).
        let perMinute = GoogleErrorResponse(
            error: .init(
                code: 403, message: "Quota exceeded.", status: "PERMISSION_DENIED",
                details: [.init(reason: "RATE_LIMIT_EXCEEDED", metadata: ["quota_limit": "DefaultPerMinutePerProject"])]
            ))
        #expect(
            PlayResponseClassifier.classify(status: 403, headers: [:], body: perMinute, now: now)
                == .throttled(retryAfter: nil))
        let daily = GoogleErrorResponse(
            error: .init(code: 403, message: "x", status: nil, details: [.init(reason: "DAILY_LIMIT_EXCEEDED")]))
        #expect(
            PlayResponseClassifier.classify(status: 403, headers: [:], body: daily, now: now) == .dailyQuotaExhausted)
    }

    @Test func oddDetailsDoNotHideTheError() throws {
        let json = """
            {"error":{"code":403,"message":"m","status":"PERMISSION_DENIED",
              "errors":[{"reason":"dailyLimitExceeded"}],
              "details":[7,{"@type":["x"],"reason":{"a":1},"metadata":{"quota_limit":5}},
                         {"reason":"RATE_LIMIT_EXCEEDED","metadata":{"quota_limit":"PerDay","n":1}}]}}
            """
        let body = try #require(GoogleErrorResponse(json: Data(json.utf8)))
        #expect(body.detailReasons == ["RATE_LIMIT_EXCEEDED"])
        #expect(body.mentionsPerDay)
    }

    @Test func goneIsGone() throws {
        let body = GoogleErrorResponse(
            error: .init(code: 410, message: "The subscription purchase is no longer available.", status: nil))
        #expect(PlayResponseClassifier.classify(status: 410, headers: [:], body: body, now: now) == .gone)
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
}
