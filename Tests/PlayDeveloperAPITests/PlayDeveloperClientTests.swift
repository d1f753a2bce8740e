import Foundation
import RateLimiting
import StoreHTTP
import Testing

@testable import PlayDeveloperAPI

@Suite struct PlayDeveloperClientTests {
    static let voidedPath = "/androidpublisher/v3/applications/com.acme.app/purchases/voidedpurchases"

    func page() throws -> RecordingTransport.Reply { .json(200, data: try Fixtures.data("voidedpurchases-list.json")) }

    func error(_ status: Int, _ fixture: String, headers: [String: String] = [:]) throws -> RecordingTransport.Reply {
        .json(status, try Fixtures.text(fixture), headers: headers)
    }

    // MARK: Request construction

    @Test func firstPageCarriesTheWindowAsMilliseconds() async throws {
        let harness = try ClientHarness([.token(), try page()])
        let response = try await harness.client.listVoidedPurchases(
            packageName: "com.acme.app", startTime: Date(timeIntervalSince1970: 1_788_000_000.123),
            endTime: Date(timeIntervalSince1970: 1_790_000_000), maxResults: 1000,
            type: .oneTimeProductsAndSubscriptions,
            includeQuantityBasedPartialRefund: true, purpose: .incremental)
        #expect(response.voidedPurchases.count == 3)

        let request = try #require(harness.transport.requests.last)
        #expect(request.method == "GET")
        #expect(request.url.host == "androidpublisher.googleapis.com")
        #expect(request.url.path == Self.voidedPath)
        #expect(
            request.queryItems == [
                "startTime": "1788000000123", "endTime": "1790000000000", "maxResults": "1000", "type": "1",
                "includeQuantityBasedPartialRefund": "true",
            ])
        #expect(request.headers["Authorization"] == "Bearer ya29.test-token")
        #expect(request.timeout == 12)
    }

    @Test func continuationPageSendsTheTokenAndNoWindow() async throws {
        let harness = try ClientHarness([.token(), try page()])
        _ = try await harness.client.listVoidedPurchases(
            packageName: "com.acme.app", startTime: Date(timeIntervalSince1970: 1),
            endTime: Date(timeIntervalSince1970: 2),
            token: "CgwI+ZuQ/wY=&x=1", maxResults: 1000, purpose: .incremental)
        let request = try #require(harness.transport.requests.last)
        #expect(request.queryItems == ["token": "CgwI+ZuQ/wY=&x=1", "maxResults": "1000"])
        #expect(request.url.absoluteString.contains("token=CgwI%2BZuQ%2FwY%3D%26x%3D1"))
    }

    @Test func defaultsSendNoQuery() async throws {
        let harness = try ClientHarness([.token(), try page()])
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(harness.transport.requests.last?.url.query == nil)
    }

    @Test func baseURLPathPrefixIsKept() async throws {
        let harness = try ClientHarness(
            [.token(), try page()], baseURL: URL(string: "http://127.0.0.1:8088/google/")!,
            tokenURL: URL(string: "http://127.0.0.1:8088/token")!)
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(harness.transport.requests.first?.url.absoluteString == "http://127.0.0.1:8088/token")
        #expect(harness.transport.requests.last?.url.absoluteString == "http://127.0.0.1:8088/google" + Self.voidedPath)
    }

    @Test func subscriptionTokenIsPercentEncodedIntoThePath() async throws {
        let harness = try ClientHarness([.token(), .json(200, data: try Fixtures.data("subscriptionsv2-active.json"))])
        let token = "abc/def+ghi=.AO-J1O?x#y"
        let subscription = try await harness.client.subscriptionV2(
            packageName: "com.acme.app", token: token, purpose: .incremental)
        #expect(subscription.subscriptionState == .active)
        let url = try #require(harness.transport.requests.last?.url)
        #expect(
            url.absoluteString
                == "https://androidpublisher.googleapis.com/androidpublisher/v3/applications/com.acme.app/purchases/subscriptionsv2/tokens/abc%2Fdef%2Bghi%3D.AO-J1O%3Fx%23y"
        )
        #expect(url.query == nil && url.fragment == nil)
        #expect(harness.gate.acquires(.googleSubscriptions) == 1)
    }

    @Test(arguments: [0, 1001, -5])
    func maxResultsOutOfRangeIsRejectedWithoutACall(maxResults: Int) async throws {
        let harness = try ClientHarness()
        let error = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(
                packageName: "com.acme.app", maxResults: maxResults, purpose: .incremental)
        }
        #expect(error.code == .invalidArgument)
        #expect(harness.transport.requests.isEmpty && harness.gate.events.isEmpty)
    }

    // MARK: Quota gate

    @Test func everyCallPassesTheGateBeforeAndReportsAfter() async throws {
        let harness = try ClientHarness([.token(), try page(), try page()])
        for _ in 0..<2 {
            _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .backfill)
        }
        let events = harness.gate.events
        #expect(
            events.map(\.api) == [
                .googleOAuthToken, .googleOAuthToken, .googleVoidedPurchases, .googleVoidedPurchases,
                .googleVoidedPurchases, .googleVoidedPurchases,
            ])
        #expect(events.map { $0.feedback == nil } == [true, false, true, false, true, false])
        #expect(harness.gate.acquires.allSatisfy { $0.purpose == .backfill && $0.app == "acme-android" })
        #expect(harness.gate.feedback(.googleVoidedPurchases) == [.accepted, .accepted])
        #expect(harness.tokenRequests == 1)
    }

    @Test func gateRefusalStopsBeforeTheStoreIsCalled() async throws {
        let harness = try ClientHarness([.token(), try page()], gate: CountingQuotaGate(limit: 1))
        await #expect(throws: QuotaError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(harness.apiRequests.isEmpty)
    }

    /// A loaded host: the gate's grant reaches the transport after the moment it had to leave by. Sent, it could reach
    /// the store in the next window's count; it is left unused, and the gate asked again.
    @Test func aGrantThatReachesTheTransportLateIsAskedForAgain() async throws {
        let harness = try ClientHarness([.token(), try page()], gate: CountingQuotaGate(lateGrants: 1))
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        // The token call's first grant came late: not sent, asked for again; then the voided call, on time.
        #expect(
            harness.gate.acquires.map(\.api) == [.googleOAuthToken, .googleOAuthToken, .googleVoidedPurchases])
        #expect(harness.transport.lateRequests.count == 1)
        #expect(harness.transport.requests.count == 2)
        #expect(harness.transport.requests.allSatisfy { $0.leaveBy != nil })
        // Nothing reached the store for the late grant: one report per call sent.
        #expect(harness.gate.reports.count == 2)
    }

    /// On a host slower than every margin each grant would come late: after two, the call is sent anyway.
    @Test func aCallIsSentAfterTwoLateGrants() async throws {
        let harness = try ClientHarness([.token(), try page()], gate: CountingQuotaGate(lateGrants: 5))
        _ = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        // Token: late, late, sent regardless (grant 3). Voided: late (grant 4), late (grant 5), sent (grant 6).
        #expect(harness.gate.acquires.count == 6)
        #expect(harness.transport.lateRequests.count == 4)
        #expect(harness.transport.requests.map { $0.leaveBy == nil } == [true, true])
    }

    // MARK: Quota answers

    @Test func dailyQuotaStopsAtOnceAndTellsTheGate() async throws {
        let harness = try ClientHarness([.token(), try error(403, "error-403-per-day.json")])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .dailyQuotaExhausted)
        #expect(failure.isQuota && failure.isRetryable)
        #expect(failure.httpStatus == 403 && failure.reasons == ["rateLimitExceeded"])
        #expect(failure.packageName == "com.acme.app" && failure.app == "acme-android")
        #expect(failure.request == "GET " + Self.voidedPath)
        // The day the call left in, by the client's clock: a refusal just after midnight spent the day before.
        let sentOn = PacificDay(containing: harness.time.now)
        #expect(harness.gate.feedback(.googleVoidedPurchases) == [.dailyQuotaExhausted(sentOn: sentOn)])
        #expect(harness.apiRequests.count == 1)
        #expect(harness.time.sleeps.isEmpty)
    }

    /// The refusal of a call that left a second before Pacific midnight and was answered after it spent the day
    /// it left in, not the day of the answer (the gate would otherwise hold the new day's quota spent).
    @Test func aDailyRefusalAnsweredAfterMidnightSpentTheDayTheCallLeftIn() async throws {
        let before = PacificDay(containing: Date(timeIntervalSince1970: 1_790_000_000))
        let harness = try ClientHarness(
            [.token(), try error(403, "error-403-per-day.json")], start: before.end.addingTimeInterval(-1))
        let time = harness.time
        harness.transport.whileSending { request in
            if !request.isTokenRequest { time.advance(by: 2) }
        }
        _ = await #expect(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(PacificDay(containing: harness.time.now) == before.next, "answered after midnight")
        #expect(harness.gate.feedback(.googleVoidedPurchases) == [.dailyQuotaExhausted(sentOn: before)])
    }

    @Test func throttledAnswersAreReportedAndRetriedAfterRetryAfter() async throws {
        let harness = try ClientHarness([
            .token(), try error(429, "error-429.json", headers: ["retry-after": "10"]),
            try error(403, "error-403-per-30s.json"),
            try page(),
        ])
        let response = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(response.voidedPurchases.count == 3)
        #expect(
            harness.gate.feedback(.googleVoidedPurchases) == [
                .throttled(retryAfter: 10), .throttled(retryAfter: nil), .accepted,
            ])
        #expect(harness.gate.acquires(.googleVoidedPurchases) == 3)
        #expect(harness.time.sleeps == [10, 2])
    }

    @Test func throttledWithoutRetriesThrowsRateLimited() async throws {
        let harness = try ClientHarness(
            [.token(), try error(429, "error-429.json", headers: ["retry-after": "4"])],
            retriesThrottled: false)
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .rateLimited && failure.retryAfter == 4 && failure.googleStatus == "RESOURCE_EXHAUSTED")
    }

    // MARK: Retries

    @Test func serverErrorsAndTimeoutsAreRetriedWithBackoffEachThroughTheGate() async throws {
        let harness = try ClientHarness([
            .token(), try error(503, "error-503.json"), .timeout(), .json(500, "oops"), try page(),
        ])
        let response = try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        #expect(response.voidedPurchases.count == 3)
        #expect(harness.gate.acquires(.googleVoidedPurchases) == 4)
        #expect(harness.gate.feedback(.googleVoidedPurchases) == [.accepted, .accepted, .accepted, .accepted])
        #expect(harness.time.sleeps == [1, 2, 4])
    }

    @Test func retriesAreBoundedInCount() async throws {
        let replies: [RecordingTransport.Reply] = [.token()] + Array(repeating: .json(502, "bad gateway"), count: 10)
        let harness = try ClientHarness(
            replies, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 1, maxDelay: 30, maxTotalTime: 1000))
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .serverError && failure.httpStatus == 502 && failure.isRetryable)
        #expect(harness.apiRequests.count == 3)
    }

    @Test func retriesAreBoundedInTime() async throws {
        let replies: [RecordingTransport.Reply] = [.token()] + Array(repeating: .timeout(), count: 10)
        let harness = try ClientHarness(
            replies, retryPolicy: RetryPolicy(maxAttempts: 10, baseDelay: 1, maxDelay: 30, maxTotalTime: 10))
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .transport)
        // Waits 1, 2, 4 (7 s in all); the next 8 s wait would pass the 10 s budget.
        #expect(harness.time.sleeps == [1, 2, 4])
        #expect(harness.apiRequests.count == 4)
    }

    @Test func oversizedAnswerIsNotRetried() async throws {
        let harness = try ClientHarness([
            .token(),
            .failure(TransportError(code: .tooLarge, request: "GET /x", message: "body of 99 bytes exceeds 10")),
        ])
        let failure = try await #require(throws: PlayAPIError.self) {
            try await harness.client.listVoidedPurchases(packageName: "com.acme.app", purpose: .incremental)
        }
        #expect(failure.code == .responseTooLarge && !failure.isRetryable)
        #expect(harness.apiRequests.count == 1)
    }
}
