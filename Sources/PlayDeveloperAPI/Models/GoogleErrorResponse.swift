import Foundation

/// Google's error body: `{"error":{"code","message","status","errors":[{"domain","reason","message"}]}}`.
///
/// See [Google API errors](https://cloud.google.com/apis/design/errors#http_mapping) and the
/// [Play Developer API quota page](https://developers.google.com/android-publisher/quotas).
public struct GoogleErrorResponse: Sendable, Equatable, Codable {
    /// The `error` object.
    public struct Body: Sendable, Equatable, Codable {
        /// The HTTP status code, repeated.
        public var code: Int?
        /// A developer-facing message, e.g. "Quota exceeded for quota metric 'Queries' and limit 'Queries per day'".
        public var message: String?
        /// The canonical status, e.g. `RESOURCE_EXHAUSTED`, `PERMISSION_DENIED`, `UNAUTHENTICATED`.
        public var status: String?
        /// The older per-error details.
        public var errors: [Detail]?

        /// Creates a body.
        public init(code: Int?, message: String?, status: String?, errors: [Detail]? = nil) {
            self.code = code
            self.message = message
            self.status = status
            self.errors = errors
        }
    }

    /// One `errors[]` entry.
    public struct Detail: Sendable, Equatable, Codable {
        /// E.g. `usageLimits`, `androidpublisher`, `global`.
        public var domain: String?
        /// E.g. `rateLimitExceeded`, `userRateLimitExceeded`, `permissionDenied`, `notFound`.
        public var reason: String?
        /// A message.
        public var message: String?

        /// Creates a detail.
        public init(domain: String? = nil, reason: String?, message: String? = nil) {
            self.domain = domain
            self.reason = reason
            self.message = message
        }
    }

    /// The `error` object.
    public var error: Body

    /// Creates an error response.
    public init(error: Body) { self.error = error }

    /// Decodes a body, or returns `nil` when it is not Google's error shape (HTML from a proxy, empty, truncated).
    public init?(json: Data) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: json) else { return nil }
        self = decoded
    }

    /// `errors[].reason` values, in order, without empties.
    public var reasons: [String] { (error.errors ?? []).compactMap(\.reason).filter { !$0.isEmpty } }

    /// Whether the top-level message or any detail message says the limit is per day.
    public var mentionsPerDay: Bool {
        let messages = [error.message] + (error.errors ?? []).map(\.message)
        return messages.contains { message in
            guard let message else { return false }
            return message.range(of: "per day", options: .caseInsensitive) != nil
                || message.range(of: "per-day", options: .caseInsensitive) != nil
        }
    }
}
