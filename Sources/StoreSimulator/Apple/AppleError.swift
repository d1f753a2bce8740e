/// App Store Server API error answers: `{"errorCode":N,"errorMessage":"..."}`.
/// https://developer.apple.com/documentation/appstoreserverapi/error_codes
enum AppleError {
    static func reply(_ status: Int, _ code: Int, _ message: String) -> StoreReply {
        .json(status) { json in
            json.object { object in
                object.field("errorCode", code)
                object.field("errorMessage", message)
            }
        }
    }

    static func transactionIdNotFound() -> StoreReply { reply(404, 4_040_010, "Transaction id not found.") }
    static func invalidTransactionId() -> StoreReply { reply(400, 4_000_006, "Invalid transaction id.") }
    static func invalidRevision() -> StoreReply { reply(400, 4_000_005, "Invalid request revision.") }
    static func startDateTooFarInPast() -> StoreReply { reply(400, 4_000_012, "Start date too far in past.") }
    static func startDateAfterEndDate() -> StoreReply { reply(400, 4_000_013, "Start date after end date.") }
    static func invalidPaginationToken() -> StoreReply { reply(400, 4_000_014, "Invalid pagination token.") }
    static func invalidStartDate() -> StoreReply { reply(400, 4_000_015, "Invalid start date.") }
    static func invalidEndDate() -> StoreReply { reply(400, 4_000_016, "Invalid end date.") }
    static func paginationTokenExpired() -> StoreReply { reply(400, 4_000_017, "Pagination token expired.") }
    static func invalidNotificationType() -> StoreReply { reply(400, 4_000_018, "Invalid notification type.") }
    static func multipleFilters() -> StoreReply { reply(400, 4_000_019, "Multiple filters supplied.") }
    static func invalidSort() -> StoreReply { reply(400, 4_000_021, "Invalid sort.") }
    static func invalidStatus() -> StoreReply { reply(400, 4_000_031, "Invalid status.") }
    static func badRequest() -> StoreReply { reply(400, 4_000_000, "Bad request.") }

    /// 429 with `Retry-After` as a UNIX time in milliseconds.
    static func rateLimitExceeded(retryAtMillis: Int64) -> StoreReply {
        var reply = reply(429, 4_290_000, "Rate limit exceeded.")
        reply.retryAfter = String(retryAtMillis)
        return reply
    }

    /// 404 "not found, retryable": 4040002 account, 4040004 app, 4040006 original transaction id, by `turn`.
    static func notFoundRetryable(_ turn: UInt64) -> StoreReply {
        switch turn % 3 {
        case 0: return reply(404, 4_040_002, "Account not found. Please try again.")
        case 1: return reply(404, 4_040_004, "App not found. Please try again.")
        default: return reply(404, 4_040_006, "Original transaction id not found. Please try again.")
        }
    }

    /// 404 "not found", final: 4040001 account or 4040005 original transaction id, by `turn`.
    static func notFoundFinal(_ turn: UInt64) -> StoreReply {
        turn % 2 == 0
            ? reply(404, 4_040_001, "Account not found.")
            : reply(404, 4_040_005, "Original transaction id not found.")
    }

    static func serverError(retryable: Bool) -> StoreReply {
        retryable
            ? reply(500, 5_000_001, "An unknown error occurred. Please try again.")
            : reply(500, 5_000_000, "An unknown error occurred.")
    }

    /// 401: Apple answers a bad bearer token with no JSON body.
    static func unauthorized() -> StoreReply {
        StoreReply(status: 401, body: "Unauthenticated\n", contentType: "text/plain")
    }
}
