/// Every failure of this module: key files, API calls and signed-payload verification.
///
/// The text names the app, the request (method and path, never the query, which may hold tokens), the HTTP status and
/// Apple's error code where there is one. It never holds a key, a bearer token or a JWT.
public struct AppStoreServerAPIError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short stable name.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// The `.p8` key file is missing, unreadable, not PEM, or not a P-256 key.
        public static let privateKey = Code("privateKey")
        /// A root certificate file is missing or not a certificate, or another setting is unusable; also Apple's 401
        /// (`httpStatus` 401: the key, key ID, issuer ID or bundle ID is refused for every call).
        public static let configuration = Code("configuration")
        /// No HTTP answer (timeout, refused or dropped connection, oversized body).
        public static let transport = Code("transport")
        /// The API answered with an error status.
        public static let apiError = Code("apiError")
        /// A successful answer whose body could not be decoded.
        public static let invalidResponse = Code("invalidResponse")
        /// A signing error while making the bearer token.
        public static let tokenSigning = Code("tokenSigning")

        /// Not a compact JWS, undecodable parts, or a header without exactly three `x5c` certificates.
        public static let malformedJWS = Code("malformedJWS")
        /// The JWS header's `alg` is not ES256.
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        /// The certificates do not chain from leaf through intermediate to a configured root.
        public static let invalidCertificateChain = Code("invalidCertificateChain")
        /// The leaf or the intermediate lacks Apple's certificate extension OID.
        public static let missingAppleOID = Code("missingAppleOID")
        /// A certificate had expired at the payload's `signedDate`.
        public static let certificateExpired = Code("certificateExpired")
        /// A certificate was not yet valid at the payload's `signedDate`.
        public static let certificateNotYetValid = Code("certificateNotYetValid")
        /// The ES256 signature does not verify with the leaf certificate's key.
        public static let invalidSignature = Code("invalidSignature")
        /// The payload is for another app's bundle identifier.
        public static let bundleIdMismatch = Code("bundleIdMismatch")
        /// The payload is from another environment than the one configured.
        public static let environmentMismatch = Code("environmentMismatch")
        /// The notification is for another app Apple ID (checked in production).
        public static let appAppleIdMismatch = Code("appAppleIdMismatch")
        /// The payload is not a JSON object of the expected shape.
        public static let invalidPayload = Code("invalidPayload")

        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, for a person.
    public var message: String
    /// The configured app, when known.
    public var app: String?
    /// `METHOD /path` of the request, when there was one (no query string).
    public var request: String?
    /// The HTTP status, when the API answered.
    public var httpStatus: Int?
    /// Apple's error code from the body, when there was one (unknown codes kept).
    public var apiErrorCode: APIErrorCode?
    /// The wait Apple asked for with `Retry-After`, as seconds from when it answered.
    public var retryAfter: Double?
    /// Whether the same call may succeed later (timeouts, 429, 5xx, Apple 5000001).
    public var isRetryable: Bool

    /// Creates an error.
    public init(
        code: Code, message: String, app: String? = nil, request: String? = nil, httpStatus: Int? = nil,
        apiErrorCode: APIErrorCode? = nil, retryAfter: Double? = nil, isRetryable: Bool = false
    ) {
        self.code = code
        self.message = message
        self.app = app
        self.request = request
        self.httpStatus = httpStatus
        self.apiErrorCode = apiErrorCode
        self.retryAfter = retryAfter
        self.isRetryable = isRetryable
    }

    /// Whether a signed payload failed verification (and must not be stored).
    public var isVerificationFailure: Bool {
        [
            Code.malformedJWS, .unsupportedAlgorithm, .invalidCertificateChain, .missingAppleOID, .certificateExpired,
            .certificateNotYetValid, .invalidSignature, .bundleIdMismatch, .environmentMismatch, .appAppleIdMismatch,
            .invalidPayload,
        ].contains(code)
    }

    public var description: String {
        var parts: [String] = []
        if let app { parts.append("app \(app)") }
        if let request { parts.append(request) }
        if let httpStatus { parts.append("HTTP \(httpStatus)") }
        if let apiErrorCode { parts.append("Apple error \(apiErrorCode)") }
        parts.append("\(code): \(message)")
        return parts.joined(separator: ": ")
    }
}
