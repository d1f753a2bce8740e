import Foundation
import StoreHTTP

extension AppStoreServerClient {
    /// The error an answer stands for, or `nil` for 2xx. Pure: decides retryability from the status and Apple's code.
    ///
    /// A 401 is ``AppStoreServerAPIError/Code/configuration``: the key, key ID, issuer ID or bundle ID is wrong for
    /// every call, so a job stops at once (exit 78) instead of failing once per customer. Apple's "not found,
    /// retryable" codes (4040002, 4040004, 4040006) are retryable, like 5xx: 5000001 says so, and 5000000 is retried
    /// too (every call here is idempotent, and an outage answers either).
    static func error(for response: HTTPResponse, app: String, request: String, now: Date) -> AppStoreServerAPIError? {
        guard !(200..<300).contains(response.status) else { return nil }
        let payload = try? JSONDecoder().decode(ErrorPayload.self, from: response.body)
        let code = payload?.errorCode
        let retryAfter = response.header("Retry-After").flatMap { RetryAfter.seconds(from: $0, now: now) }
        let retryable =
            response.status == 429 || response.status >= 500 || code == .generalInternalRetryable
            || code == .rateLimitExceeded || (response.status == 404 && code?.isRetryableNotFound == true)
        var message = payload?.errorMessage ?? (payload == nil ? "no error body" : "no error message")
        if response.status == 401 {
            message =
                "Apple refused the credentials (\(String(message.prefix(100)))): check the key file, key ID, issuer ID "
                + "and bundle ID (production answers 401 for an app never released); every call would be refused"
        }
        return AppStoreServerAPIError(
            code: response.status == 401 ? .configuration : .apiError, message: message, app: app, request: request,
            httpStatus: response.status,
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
        if response.body.isEmpty, let empty = NoContent() as? Response { return empty }
        do {
            return try JSONDecoder().decode(Response.self, from: response.body)
        } catch {
            throw AppStoreServerAPIError(
                code: .invalidResponse,
                message: "the answer is not the expected JSON (\(Response.self))\(Self.whereWrong(error))", app: app,
                request: request, httpStatus: response.status)
        }
    }

    /// Where a decoding error found the answer wrong (`: notificationHistory[3].signedPayload: ...`), or nothing.
    private static func whereWrong(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "" }
        let (field, message) = DecodingError.describe(error)
        return ": " + (field.map { "\($0): " } ?? "") + message
    }
}
