import Foundation
import StoreHTTP

/// Decides what an API answer means for the caller: success, quota, a token to renew, or a failure. Pure, so each
/// rule is tested without I/O.
enum PlayResponseClassifier {
    enum Disposition: Equatable {
        /// 2xx.
        case success
        /// 429, or 403 `rateLimitExceeded`/`userRateLimitExceeded` without "per day": slow down, may retry.
        case throttled(retryAfter: Double?)
        /// A quota answer that names a daily limit (`dailyLimitExceeded`, an ErrorInfo `quota_limit` per day, or a
        /// message saying "per day"): stop calling this API until the Pacific day turns.
        case dailyQuotaExhausted
        /// 401 other than `permissionDenied`: the access token is stale; renew it once.
        case unauthorized
        /// 401/403 `permissionDenied` (or 403 `PERMISSION_DENIED`/`forbidden`): the account lacks a permission.
        case permissionDenied
        /// 404.
        case notFound
        /// 410: `subscriptionsv2.get` for a purchase that expired long ago (about 60 days).
        case gone
        /// 5xx (and 408): the store failed; retry with backoff.
        case serverError(retryAfter: Double?)
        /// Any other answer: do not retry.
        case clientError
    }

    static func classify(status: Int, headers: [String: String], body: GoogleErrorResponse?, now: Date) -> Disposition {
        if (200..<300).contains(status) { return .success }
        let reasons = Set(body?.reasons ?? [])
        let googleStatus = body?.error.status
        // StoreHTTP's parser, shared with the Apple client: it never traps on odd (non-ASCII, oversized) values.
        let retryAfter = headers["retry-after"].flatMap { RetryAfter.seconds(from: $0, now: now) }
        let isQuota =
            status == 429 || googleStatus == "RESOURCE_EXHAUSTED"
            || (status == 403 && body?.mentionsQuota == true)
        if isQuota {
            return body?.mentionsPerDay == true ? .dailyQuotaExhausted : .throttled(retryAfter: retryAfter)
        }
        switch status {
        case 401:
            return reasons.contains("permissionDenied") ? .permissionDenied : .unauthorized
        case 403:
            return .permissionDenied
        case 404:
            return .notFound
        case 410:
            return .gone
        case 408, 500...599:
            return .serverError(retryAfter: retryAfter)
        default:
            return .clientError
        }
    }
}
