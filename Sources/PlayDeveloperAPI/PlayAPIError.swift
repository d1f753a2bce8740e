import StoreHTTP

/// A failure of the Google Play Developer API client: reading the service-account key, signing in, or calling the API.
///
/// The text (``description``) is one line, safe to log: it never holds the private key, the signed assertion, an
/// access token, a page token or a full purchase token (request paths show at most a short prefix of a token).
public struct PlayAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in the terms an operator acts on.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The service-account key file is missing, unreadable, not JSON, lacks a field or holds no RSA PEM key.
        case keyFile
        /// The JWT assertion could not be signed.
        case signing
        /// The token endpoint refused the assertion (`invalid_grant`): clock skew, or a deleted or revoked key.
        case invalidGrant
        /// The token endpoint does not know the client (`invalid_client`): a disabled or deleted service account.
        case invalidClient
        /// The token endpoint answered something else that is not a token.
        case tokenEndpoint
        /// The API rejected the access token (401), even after signing in again.
        case unauthenticated
        /// The service account lacks a Play Console permission (401/403 `permissionDenied`).
        case permissionDenied
        /// The resource does not exist (404), e.g. an unknown purchase token on `subscriptionsv2.get`.
        case notFound
        /// The resource is gone for good (410): `subscriptionsv2.get` for a purchase that expired about 60 days ago.
        case gone
        /// The store throttled the call (429 or 403 `rateLimitExceeded`) and retries did not get through.
        case rateLimited
        /// The store said the daily quota is spent (403/429 `dailyLimitExceeded`, an ErrorInfo `quota_limit` per day, or
        /// "per day" in the message): stop calling this API until the Pacific day turns (exit 75).
        case dailyQuotaExhausted
        /// The store failed (5xx) and retries within the bounds did not help.
        case serverError
        /// No answer: timeout, refused or dropped connection.
        case transport
        /// This host cannot make the call as configured (the store's TLS certificate not trusted, an unsupported
        /// scheme): an operator must act (exit 78).
        case transportSettings
        /// The answer was larger than the transport accepts.
        case responseTooLarge
        /// The answer was not the JSON the discovery document describes (truncated, malformed, wrong types).
        case malformedResponse
        /// The store rejected the request (another 4xx).
        case badRequest
        /// The caller passed an argument the API cannot take.
        case invalidArgument
    }

    /// What went wrong.
    public var code: Code
    /// One line for the operator.
    public var message: String
    /// The configured app id the call was made for, when known.
    public var app: String?
    /// The Play package name, when known.
    public var packageName: String?
    /// Method and path of the request (no query string; tokens in the path are cut to a short prefix).
    public var request: String?
    /// The HTTP status, when the store answered.
    public var httpStatus: Int?
    /// Google's `error.status` (e.g. `RESOURCE_EXHAUSTED`), or the OAuth `error` (e.g. `invalid_grant`).
    public var googleStatus: String?
    /// Google's `error.errors[].reason` values (e.g. `rateLimitExceeded`, `permissionDenied`).
    public var reasons: [String]
    /// For a malformed answer: the coding path of the field that failed (e.g. `voidedPurchases[3].voidedTimeMillis`).
    public var field: String?
    /// The key file involved, for key-file errors.
    public var file: String?
    /// The store's `Retry-After`, in seconds, when it sent one.
    public var retryAfter: Double?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, app: String? = nil, packageName: String? = nil, request: String? = nil,
        httpStatus: Int? = nil, googleStatus: String? = nil, reasons: [String] = [], field: String? = nil,
        file: String? = nil, retryAfter: Double? = nil
    ) {
        self.code = code
        self.message = message
        self.app = app
        self.packageName = packageName
        self.request = request
        self.httpStatus = httpStatus
        self.googleStatus = googleStatus
        self.reasons = reasons
        self.field = field
        self.file = file
        self.retryAfter = retryAfter
    }

    /// Whether the same call may succeed later without a change of configuration or code: throttling, the daily
    /// quota (after the Pacific day turns), 5xx and transport failures. A job stopping on such an error exits 75.
    public var isRetryable: Bool {
        switch code {
        case .rateLimited, .dailyQuotaExhausted, .serverError, .transport: return true
        case .keyFile, .signing, .invalidGrant, .invalidClient, .tokenEndpoint, .unauthenticated, .permissionDenied,
            .notFound, .gone, .responseTooLarge, .malformedResponse, .badRequest, .invalidArgument, .transportSettings:
            return false
        }
    }

    /// Whether the error is about quota (throttled or spent for the day).
    public var isQuota: Bool { code == .rateLimited || code == .dailyQuotaExhausted }

    public var description: String {
        var parts: [String] = []
        if let app { parts.append("app \(app)") }
        if let packageName { parts.append("package \(packageName)") }
        if let request { parts.append(request) }
        if let file { parts.append("key file \(file)") }
        var context: [String] = []
        if let httpStatus { context.append("HTTP \(httpStatus)") }
        if let googleStatus { context.append(googleStatus) }
        if !reasons.isEmpty { context.append("reason \(reasons.joined(separator: ","))") }
        if let field { context.append("field \(field)") }
        if let retryAfter { context.append("retry after \(retryAfter)s") }
        let head = parts.isEmpty ? "" : parts.joined(separator: ", ") + ": "
        let tail = context.isEmpty ? "" : " (" + context.joined(separator: ", ") + ")"
        return "\(head)\(code.rawValue): \(message)\(tail)"
    }
}

extension PlayAPIError.Code {
    /// The code of a call that got no answer (``TransportError/Code``).
    public init(transport code: TransportError.Code) {
        switch code {
        case .tooLarge: self = .responseTooLarge
        case .configuration: self = .transportSettings
        default: self = .transport
        }
    }
}
