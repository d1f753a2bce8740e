/// Google's error answers, in the shape its APIs send:
/// `{"error":{"code":N,"message":"...","errors":[{"message","domain","reason"}],"status":"..."}}`.
enum GoogleError {
    static func reply(
        _ code: Int, status: String, message: String, reason: String, domain: String = "global",
        extra: [(String, String)] = []
    ) -> StoreReply {
        var reply = StoreReply.json(code) { json in
            json.object { object in
                object.object("error") { error in
                    error.field("code", code)
                    error.field("message", message)
                    error.array("errors") { errors in
                        errors.object { item in
                            item.field("message", message)
                            item.field("domain", domain)
                            item.field("reason", reason)
                            for (name, value) in extra { item.field(name, value) }
                        }
                    }
                    error.field("status", status)
                }
            }
        }
        reply.contentType = "application/json; charset=UTF-8"
        return reply
    }

    /// A token granted for another API (Google's 403 `ACCESS_TOKEN_SCOPE_INSUFFICIENT`).
    static func insufficientScope() -> StoreReply {
        reply(
            403, status: "PERMISSION_DENIED", message: "Request had insufficient authentication scopes.",
            reason: "insufficientPermissions")
    }

    static func unauthenticated() -> StoreReply {
        reply(
            401, status: "UNAUTHENTICATED",
            message:
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
                + "valid authentication credential.",
            reason: "authError", extra: [("location", "Authorization"), ("locationType", "header")])
    }

    static func invalidArgument(_ message: String) -> StoreReply {
        reply(400, status: "INVALID_ARGUMENT", message: message, reason: "invalid")
    }

    static func applicationNotFound(_ packageName: String) -> StoreReply {
        reply(
            404, status: "NOT_FOUND", message: "No application was found for the given package name.",
            reason: "applicationNotFound", domain: "androidpublisher")
    }

    static func purchaseTokenNotFound() -> StoreReply {
        reply(
            404, status: "NOT_FOUND", message: "The purchase token was not found.", reason: "purchaseTokenNotFound",
            domain: "androidpublisher")
    }

    /// `orders.get` / `orders.batchget` with an order id that is unknown or of another package (the whole batch).
    static func orderNotFound() -> StoreReply {
        reply(
            404, status: "NOT_FOUND", message: "The order was not found or does not belong to this application.",
            reason: "notFound")
    }

    /// The service account may not read financial data.
    static func permissionDenied() -> StoreReply {
        reply(
            403, status: "PERMISSION_DENIED",
            message: "The current user has insufficient permissions to perform the requested operation.",
            reason: "permissionDenied", domain: "androidpublisher")
    }

    static func notFound() -> StoreReply {
        reply(404, status: "NOT_FOUND", message: "Requested entity was not found.", reason: "notFound")
    }

    static func serverError(second: Bool) -> StoreReply {
        second
            ? reply(
                503, status: "UNAVAILABLE", message: "The service is currently unavailable.", reason: "backendError")
            : reply(500, status: "INTERNAL", message: "Internal error encountered.", reason: "backendError")
    }

    /// Over quota: 429 RESOURCE_EXHAUSTED or 403 rateLimitExceeded, naming the limit ("Queries per day").
    static func quotaExceeded(rule: QuotaRule, style: QuotaOptions.GoogleStyle) -> StoreReply {
        let message =
            "Quota exceeded for quota metric 'Queries' and limit '\(rule.name)' of service "
            + "'androidpublisher.googleapis.com' for consumer 'project_number:100000000001'."
        switch style {
        case .tooManyRequests:
            return reply(429, status: "RESOURCE_EXHAUSTED", message: message, reason: "rateLimitExceeded")
        case .forbidden:
            return reply(403, status: "PERMISSION_DENIED", message: message, reason: "rateLimitExceeded")
        }
    }

    /// 410 Gone from `subscriptionsv2.get` for a purchase that expired long ago. (The body's reason is a guess;
    /// clients must key on the status.)
    static func gone() -> StoreReply {
        reply(
            410, status: "NOT_FOUND",
            message:
                "The subscription purchase is no longer available for query because it has been expired for too long.",
            reason: "subscriptionNoLongerAvailable", domain: "androidpublisher")
    }

    /// The daily limit spent, by `turn`: the classic 403 `dailyLimitExceeded`, or a 403 whose only quota sign is an
    /// ErrorInfo naming a per-day `quota_limit`.
    static func dailyLimitExceeded(_ turn: UInt64) -> StoreReply {
        if turn % 2 == 0 {
            return reply(
                403, status: "PERMISSION_DENIED",
                message:
                    "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT). You may monitor your "
                    + "quota usage and adjust limits in the API Console.",
                reason: "dailyLimitExceeded", domain: "usageLimits")
        }
        var reply = StoreReply.json(403) { json in
            json.object { object in
                object.object("error") { error in
                    error.field("code", 403)
                    error.field(
                        "message",
                        "Quota exceeded for quota metric 'Queries' of service 'androidpublisher.googleapis.com' for "
                            + "consumer 'project_number:100000000001'.")
                    error.field("status", "PERMISSION_DENIED")
                    error.array("details") { details in
                        details.object { info in
                            info.field("@type", "type.googleapis.com/google.rpc.ErrorInfo")
                            info.field("reason", "RATE_LIMIT_EXCEEDED")
                            info.field("domain", "googleapis.com")
                            info.object("metadata") { metadata in
                                metadata.field("quota_limit", "DefaultPerDayPerProject")
                                metadata.field("quota_metric", "androidpublisher.googleapis.com/default")
                                metadata.field("service", "androidpublisher.googleapis.com")
                            }
                        }
                    }
                }
            }
        }
        reply.contentType = "application/json; charset=UTF-8"
        return reply
    }

    /// The OAuth token endpoint's error: `{"error":"invalid_grant","error_description":"..."}`.
    static func oauth(_ error: String, _ description: String, status: Int = 400) -> StoreReply {
        .json(status) { json in
            json.object { object in
                object.field("error", error)
                object.field("error_description", description)
            }
        }
    }
}
