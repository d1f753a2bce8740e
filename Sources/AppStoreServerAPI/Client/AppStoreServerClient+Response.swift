import Foundation
import StoreHTTP

extension AppStoreServerClient {
    /// The error an answer stands for, or `nil` for 2xx. Pure: decides retryability from the status and Apple's code.
    static func error(for response: HTTPResponse, app: String, request: String, now: Date) -> AppStoreServerAPIError? {
        guard !(200..<300).contains(response.status) else { return nil }
        let payload = try? JSONDecoder().decode(ErrorPayload.self, from: response.body)
        let code = payload?.errorCode
        let retryAfter = response.header("Retry-After").flatMap { RetryAfter.seconds(from: $0, now: now) }
        let retryable =
            response.status == 429 || response.status >= 500 || code == .generalInternalRetryable
            || code == .rateLimitExceeded
        var message = payload?.errorMessage ?? (payload == nil ? "no error body" : "no error message")
        if response.status == 401 {
            message += " (check the key, key ID and issuer ID; production answers 401 for an app never released)"
        }
        return AppStoreServerAPIError(
            code: .apiError, message: message, app: app, request: request, httpStatus: response.status,
            apiErrorCode: code, retryAfter: retryAfter, isRetryable: retryable)
    }

    /// Decodes a successful answer.
    static func decode<Response: Decodable>(
        _ type: Response.Type, from response: HTTPResponse, maxBytes: Int, app: String, request: String
    ) throws -> Response {
        guard response.body.count <= maxBytes else {
            throw AppStoreServerAPIError(
                code: .invalidResponse, message: "answer of \(response.body.count) bytes exceeds \(maxBytes)",
                app: app, request: request, httpStatus: response.status)
        }
        do {
            return try JSONDecoder().decode(Response.self, from: response.body)
        } catch {
            throw AppStoreServerAPIError(
                code: .invalidResponse, message: "the answer is not the expected JSON (\(Response.self))", app: app,
                request: request, httpStatus: response.status)
        }
    }
}
