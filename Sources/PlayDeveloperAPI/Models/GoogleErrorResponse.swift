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
        /// The newer typed details (`google.rpc.ErrorInfo` and others); entries of another shape are skipped.
        public var details: [StatusDetail]?

        /// Creates a body.
        public init(
            code: Int?, message: String?, status: String?, errors: [Detail]? = nil, details: [StatusDetail]? = nil
        ) {
            self.code = code
            self.message = message
            self.status = status
            self.errors = errors
            self.details = details
        }

        enum CodingKeys: String, CodingKey {
            case code, message, status, errors, details
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            code = try? container.decodeIfPresent(Int.self, forKey: .code)
            message = try? container.decodeIfPresent(String.self, forKey: .message)
            status = try? container.decodeIfPresent(String.self, forKey: .status)
            errors = try? container.decodeIfPresent([Detail].self, forKey: .errors)
            // One odd entry must not hide the others (or the whole error): each is decoded on its own.
            details = (try? container.decodeIfPresent([LenientDetail].self, forKey: .details))?.compactMap(\.value)
        }
    }

    /// One `error.details[]` entry. Only `google.rpc.ErrorInfo`'s fields are read: `reason` (e.g.
    /// `RATE_LIMIT_EXCEEDED`), `domain` and `metadata` (e.g. `quota_limit`: `DefaultPerDayPerProject`).
    /// See [ErrorInfo](https://cloud.google.com/apis/design/errors#error_info).
    public struct StatusDetail: Sendable, Equatable, Codable {
        /// The `@type` URL, e.g. `type.googleapis.com/google.rpc.ErrorInfo`.
        public var type: String?
        /// ErrorInfo `reason`.
        public var reason: String?
        /// ErrorInfo `domain`.
        public var domain: String?
        /// ErrorInfo `metadata` (string values only; others are skipped).
        public var metadata: [String: String]?

        /// Creates a detail.
        public init(
            type: String? = nil, reason: String? = nil, domain: String? = nil, metadata: [String: String]? = nil
        ) {
            self.type = type
            self.reason = reason
            self.domain = domain
            self.metadata = metadata
        }

        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case reason, domain, metadata
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try? container.decodeIfPresent(String.self, forKey: .type)
            reason = try? container.decodeIfPresent(String.self, forKey: .reason)
            domain = try? container.decodeIfPresent(String.self, forKey: .domain)
            metadata = (try? container.decodeIfPresent([String: LenientString].self, forKey: .metadata))?
                .compactMapValues(\.value)
        }
    }

    /// A value that decodes to `nil` instead of failing.
    private struct LenientDetail: Decodable {
        var value: StatusDetail?
        init(from decoder: any Decoder) throws { value = try? StatusDetail(from: decoder) }
    }

    /// A string, or `nil` for any other JSON value.
    private struct LenientString: Decodable {
        var value: String?
        init(from decoder: any Decoder) throws { value = try? decoder.singleValueContainer().decode(String.self) }
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

    /// `error.details[].reason` values (ErrorInfo), in order, without empties.
    public var detailReasons: [String] { (error.details ?? []).compactMap(\.reason).filter { !$0.isEmpty } }

    /// Whether a reason (`errors[].reason` or an ErrorInfo `reason`) says a quota was hit: `rateLimitExceeded`,
    /// `userRateLimitExceeded`, `quotaExceeded`, `dailyLimitExceeded` or ErrorInfo's `RATE_LIMIT_EXCEEDED` and
    /// `RESOURCE_EXHAUSTED` (compared without case and underscores).
    public var mentionsQuota: Bool {
        let quota: Set<String> = [
            "ratelimitexceeded", "userratelimitexceeded", "quotaexceeded", "dailylimitexceeded", "resourceexhausted",
        ]
        return (reasons + detailReasons).contains { quota.contains(Self.folded($0)) }
    }

    /// Whether the answer says a *daily* limit is spent: the reason `dailyLimitExceeded` (in `errors[]` or an
    /// ErrorInfo), an ErrorInfo whose `metadata.quota_limit` names a per-day limit (`DefaultPerDayPerProject`), or a
    /// message saying "per day".
    public var mentionsPerDay: Bool {
        if (reasons + detailReasons).contains(where: { Self.folded($0) == "dailylimitexceeded" }) { return true }
        let limits = (error.details ?? []).compactMap { $0.metadata?["quota_limit"] }
        if limits.contains(where: { Self.folded($0).contains("perday") }) { return true }
        let messages = [error.message] + (error.errors ?? []).map(\.message)
        return messages.contains { message in
            guard let message else { return false }
            return message.range(of: "per day", options: .caseInsensitive) != nil
                || message.range(of: "per-day", options: .caseInsensitive) != nil
        }
    }

    /// Lower case without `_`, `-` and spaces, so `DAILY_LIMIT_EXCEEDED` and `dailyLimitExceeded` compare equal.
    static func folded(_ text: String) -> String {
        String(text.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " }.map(Character.init))
    }
}
