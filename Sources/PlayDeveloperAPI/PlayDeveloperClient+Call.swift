import Foundation
import RateLimiting
import StoreHTTP

extension PlayDeveloperClient {
    /// Where a call goes and how it is named in logs and errors.
    struct Endpoint {
        var api: StoreAPI
        var packageName: String
        var url: URL
        var label: String
    }

    /// GETs an API endpoint with a bearer token and returns the successful answer's body. With `formBody` the
    /// GET travels as Google's clients send a GET whose URL would be too long: a `POST` with
    /// `X-HTTP-Method-Override: GET` and the query as an `application/x-www-form-urlencoded` body.
    /// With `jsonBody` the call is a `POST` of that JSON.
    func get(
        _ endpoint: Endpoint, purpose: CallPurpose, formBody: String? = nil, jsonBody: Data? = nil,
        answerOnTimeout: Data? = nil
    ) async throws -> Data {
        var lastToken: AccessToken?
        let response = try await runner.run(
            api: endpoint.api, purpose: purpose, label: endpoint.label,
            makeRequest: {
                let token = try await authenticator.accessToken(purpose: purpose)
                lastToken = token
                var headers = ["Authorization": "Bearer \(token.value)", "Accept": "application/json"]
                if formBody != nil {
                    headers["X-HTTP-Method-Override"] = "GET"
                    headers["Content-Type"] = "application/x-www-form-urlencoded"
                }
                if jsonBody != nil { headers["Content-Type"] = "application/json" }
                return HTTPRequest(
                    method: formBody == nil && jsonBody == nil ? "GET" : "POST", url: endpoint.url, headers: headers,
                    body: jsonBody ?? formBody.map { Data($0.utf8) }, timeout: configuration.requestTimeout)
            },
            classify: { classify($0, endpoint: endpoint) },
            transportError: { error in
                PlayAPIError(
                    PlayAPIError.Code(transport: error.code),
                    "\(error.code.rawValue): \(error.message)",
                    app: app, packageName: endpoint.packageName, request: endpoint.label)
            },
            renewCredentials: {
                if let token = lastToken { await authenticator.invalidate(token) }
            },
            answerOnTimeout: answerOnTimeout.map { HTTPResponse(status: 200, headers: [:], body: $0) }
        )
        return response.body
    }

    /// Decodes a successful body, turning a `DecodingError` into a ``PlayAPIError`` naming the field.
    func decode<T>(_ endpoint: Endpoint, _ body: Data, _ decode: (Data) throws -> T) throws -> T {
        do {
            return try decode(body)
        } catch let error as DecodingError {
            let (field, message) = Self.describe(error)
            throw PlayAPIError(
                .malformedResponse, "the answer is not the expected JSON: \(message) (\(body.count) bytes)", app: app,
                packageName: endpoint.packageName, request: endpoint.label, httpStatus: 200, field: field)
        }
    }

    private func classify(_ response: HTTPResponse, endpoint: Endpoint) -> (PlayCallRunner.Verdict, QuotaFeedback) {
        let body = (200..<300).contains(response.status) ? nil : GoogleErrorResponse(json: response.body)
        let disposition = PlayResponseClassifier.classify(
            status: response.status, headers: response.headers, body: body, now: runner.runtime.now())
        func error(_ code: PlayAPIError.Code, _ message: String, retryAfter: Double? = nil) -> PlayAPIError {
            let google = body?.error.message.map { ": " + String($0.prefix(300)) } ?? ""
            return PlayAPIError(
                code, message + google, app: app,
                packageName: endpoint.packageName.isEmpty ? nil : endpoint.packageName,
                request: endpoint.label,
                httpStatus: response.status, googleStatus: body?.error.status, reasons: body?.reasons ?? [],
                retryAfter: retryAfter)
        }
        switch disposition {
        case .success:
            return (.success(response), .accepted)
        case .throttled(let retryAfter):
            let failure = error(.rateLimited, "the store throttled \(endpoint.api)", retryAfter: retryAfter)
            let verdict: PlayCallRunner.Verdict =
                runner.retriesThrottled ? .retry(failure, retryAfter: retryAfter) : .fail(failure)
            return (verdict, .throttled(retryAfter: retryAfter))
        case .dailyQuotaExhausted:
            return (
                .fail(
                    error(
                        .dailyQuotaExhausted, "the daily quota of \(endpoint.api) is spent until the Pacific day turns")
                ),
                .dailyQuotaExhausted(sentOn: nil)
            )
        case .unauthorized:
            return (.renewCredentials(error(.unauthenticated, "the API rejected the access token")), .accepted)
        case .permissionDenied:
            let hint =
                switch endpoint.api {
                case .googleVoidedPurchases, .googleOrders:
                    "the service account lacks the Play Console permission 'View financial data'"
                case .googlePubSub:
                    "the service account lacks the Pub/Sub Subscriber role on this subscription (Google Cloud IAM)"
                default:
                    "the service account lacks the Play Console permission for this app (or the app is not linked)"
                }
            return (.fail(error(.permissionDenied, hint)), .accepted)
        case .notFound:
            return (.fail(error(.notFound, "not found")), .accepted)
        case .gone:
            return (.fail(error(.gone, "gone (the purchase expired long ago)")), .accepted)
        case .serverError(let retryAfter):
            return (.retry(error(.serverError, "the store failed"), retryAfter: retryAfter), .accepted)
        case .clientError:
            return (.fail(error(.badRequest, "the store rejected the request")), .accepted)
        }
    }

    /// The coding path as `a.b[3].c` and a short message.
    static func describe(_ error: DecodingError) -> (field: String?, message: String) {
        DecodingError.describe(error)
    }
}
