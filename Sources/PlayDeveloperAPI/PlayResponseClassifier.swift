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
        /// A quota answer whose message says "per day": stop calling this API until the Pacific day turns.
        case dailyQuotaExhausted
        /// 401 other than `permissionDenied`: the access token is stale; renew it once.
        case unauthorized
        /// 401/403 `permissionDenied` (or 403 `PERMISSION_DENIED`/`forbidden`): the account lacks a permission.
        case permissionDenied
        /// 404.
        case notFound
        /// 5xx (and 408): the store failed; retry with backoff.
        case serverError(retryAfter: Double?)
        /// Any other answer: do not retry.
        case clientError
    }

    static let quotaReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded"]

    static func classify(status: Int, headers: [String: String], body: GoogleErrorResponse?, now: Date) -> Disposition {
        if (200..<300).contains(status) { return .success }
        let reasons = Set(body?.reasons ?? [])
        let googleStatus = body?.error.status
        let retryAfter = headers["retry-after"].flatMap { parseRetryAfter($0, now: now) }
        let isQuota =
            status == 429 || googleStatus == "RESOURCE_EXHAUSTED"
            || (status == 403 && !reasons.isDisjoint(with: quotaReasons))
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
        case 408, 500...599:
            return .serverError(retryAfter: retryAfter)
        default:
            return .clientError
        }
    }

    /// `Retry-After` as seconds from now: delta-seconds, or an HTTP-date. Negative or unparsable values give `nil`.
    static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) {
            return seconds.isFinite && seconds >= 0 ? seconds : nil
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
