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
    /// The access token (Google) or bearer token (Apple) is answered as expired: 401. It strikes only a token already
    /// used for ten calls (a fresh one cannot have expired yet), so a client that signs in again goes on. At rate 1
    /// every token is refused, fresh or not: a revoked In-App Purchase key or service account.
    case expiredAccessToken
    /// A 503 (Google) or a 500 with 5000001 (Apple) whose `Retry-After` holds odd content, in turn: non-ASCII (a
    /// zero-width joiner in an HTTP-date, full-width and Arabic-Indic digits), an 8,000-digit number, a 4,000-byte
    /// date, `NaN`, `-1`, `1e400`.
    case oddRetryAfter
    /// Apple: 404 "not found, retryable" (4040002, 4040004, 4040006 in turn), which Apple asks to retry later.
    case notFoundRetryable
    /// Apple: 404 "not found", final (4040001 account, 4040005 original transaction id, in turn).
    case notFoundFinal
    /// Google `subscriptionsv2.get`: 410 Gone, as for a purchase that expired about 60 days ago.
    case gone
    /// Google: the daily limit is spent, in turn as 403 `dailyLimitExceeded` (message "Daily Limit Exceeded", no
    /// "per day") and as 403 `PERMISSION_DENIED` whose only quota sign is an ErrorInfo with
    /// `metadata.quota_limit` `DefaultPerDayPerProject` in `error.details`. Counts as granted in the simulator.
    case dailyLimit
    /// Google token endpoint: accepts only Google's own token URL as the assertion's `aud` (as when a proxy passes
    /// the assertion on to Google), not the simulator's address.
    case proxiedTokenAudience

    /// Whether a rerun after the fault stops ends as if it never struck: false for the answers a store means for good
    /// (``notFoundFinal``, ``gone``, ``dailyLimit``, ``proxiedTokenAudience``), which change what a client stores or
    /// whether it may call again today.
    public var isTransient: Bool {
        switch self {
        case .notFoundFinal, .gone, .dailyLimit, .proxiedTokenAudience: return false
        default: return true
        }
    }
    // Kept last: a fault's position in allCases seeds which calls it strikes (FaultInjector).
    /// A page with more to follow names, as the next page's token, the very token it was asked with (Google
    /// `nextPageToken`, Apple `paginationToken`) or a `revision` that does not move while `hasMore` is true: a store
    /// that pages the same page forever. A chain's first page (asked without a token) is answered normally.
    case repeatedPageToken
}
