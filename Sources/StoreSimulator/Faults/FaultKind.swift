/// A way an answer can go wrong on purpose.
public enum FaultKind: String, Sendable, CaseIterable, Codable {
    /// HTTP 500 or 503 with the store's error body.
    case serverError
    /// The answer comes late (``FaultSettings/slowMillis``).
    case slow
    /// The connection is closed without an answer.
    case dropConnection
    /// The body stops half-way: `Content-Length` promises more, then the connection closes.
    case truncatedBody
    /// The body is not valid JSON.
    case malformedJSON
    /// A field has the wrong JSON type (an array where an object belongs, a string for a number, ...).
    case wrongFieldTypes
    /// Apple: signed payloads whose signature does not verify.
    case badSignature
    /// Apple: signed payloads for another bundle id.
    case wrongBundleId
    /// A page token (Google `token`, Apple `paginationToken`) is answered as expired or invalid.
    case expiredPageToken
    /// The access token (Google) or bearer token (Apple) is answered as expired: 401.
    case expiredAccessToken
}
