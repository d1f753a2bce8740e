import Foundation

/// Google's refund reviews: the RTDN pull subscriptions (Cloud Pub/Sub `POST /v1/{subscription}:pull` and
/// `:acknowledge`) and `POST /androidpublisher/v3/applications/{packageName}/orders/{orderId}:reviewrefund` (counted
/// as its own endpoint, `googleReviewRefund`, in the Orders quota bucket).
extension StoreRouter {
    /// The reply of a refund-review request, or nil when `path` is not one.
    func routeRefundReviews(_ request: StoreRequest, path: [String]) async -> StoreReply? {
        guard request.method == "POST" else { return nil }
        if path.count == 5, path[0] == "v1", path[1] == "projects", path[3] == "subscriptions",
            let colon = path[4].lastIndex(of: ":")
        {
            let name = "projects/\(path[2])/subscriptions/\(path[4][..<colon])"
            return await servePubSub(request, subscription: name, verb: String(path[4][path[4].index(after: colon)...]))
        }
        guard path.count == 6, path[0] == "androidpublisher", path[1] == "v3", path[2] == "applications",
            path[4] == "orders", path[5].hasSuffix(":reviewrefund")
        else { return nil }
        let orderId = String(path[5].dropLast(":reviewrefund".count))
        return await serve(.googleReviewRefund, request) { faults in
            guard let token = request.bearerToken, state.accessTokenIsValid(token) else {
                return (nil, GoogleError.unauthenticated(), false)
            }
            guard state.accessToken(token, grants: GoogleTokenEndpoint.scope) else {
                return (nil, GoogleError.insufficientScope(), false)
            }
            guard let app = state.googleApp(packageName: path[3]) else {
                return (nil, GoogleError.applicationNotFound(path[3]), false)
            }
            return (
                QuotaLedger.Key(
                    app: state.scenario.spec.apps[app].id, environment: nil, endpoint: .googleReviewRefund), nil, false
            )
        } answer: { _, key in
            reviewRefund(request, app: key.app, orderId: orderId)
        }
    }

    private func servePubSub(_ request: StoreRequest, subscription: String, verb: String) async -> StoreReply {
        await serve(.googlePubSub, request) { _ in
            guard let token = request.bearerToken, state.accessTokenIsValid(token) else {
                return (nil, GoogleError.unauthenticated(), false)
            }
            guard state.accessToken(token, grants: GoogleTokenEndpoint.pubsubScope) else {
                return (nil, GoogleError.insufficientScope(), false)
            }
            guard state.pubsub.exists(subscription) else { return (nil, GoogleError.notFound(), false) }
            return (QuotaLedger.Key(app: subscription, environment: nil, endpoint: .googlePubSub), nil, false)
        } answer: { _, _ in
            let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
            switch verb {
            case "pull":
                let max = (body["maxMessages"] as? NSNumber)?.intValue ?? 0
                guard max > 0 else { return GoogleError.invalidArgument("maxMessages must be positive.") }
                let now = state.now
                RefundReviewOutcomes(state: state).publish(subscription: subscription, now: now)
                let delivered = state.pubsub.pull(subscription, max: max, now: now)
                return .json { json in
                    json.object { object in
                        guard !delivered.isEmpty else { return }
                        object.array("receivedMessages") { list in
                            for (ackId, message) in delivered {
                                list.object { item in
                                    item.field("ackId", ackId)
                                    item.object("message") { inner in
                                        inner.field("data", Data(message.json.utf8).base64EncodedString())
                                        inner.field("messageId", message.messageId)
                                        inner.field("publishTime", TimeFormat.rfc3339(millis: message.publishMillis))
                                    }
                                }
                            }
                        }
                    }
                }
            case "acknowledge":
                let ackIds = body["ackIds"] as? [String] ?? []
                guard state.pubsub.acknowledge(subscription, ackIds: ackIds) else {
                    return GoogleError.permissionDenied()
                }
                return .json { json in json.object { _ in } }
            default:
                return GoogleError.notFound()
            }
        }
    }

    /// `orders.reviewrefund`: the order must have a pending review whose token the body names; Google keeps the
    /// first answer and answers later ones OK.
    private func reviewRefund(_ request: StoreRequest, app: String, orderId: String) -> StoreReply {
        guard let expected = state.pubsub.pendingToken(app: app, orderId: orderId) else {
            return GoogleError.orderNotFound()
        }
        guard let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] else {
            return GoogleError.invalidArgument("Invalid JSON payload received.")
        }
        guard body["pendingRefundToken"] as? String == expected else {
            return GoogleError.invalidArgument("Invalid pending refund token.")
        }
        guard let preference = body["refundPreference"] as? String,
            ["DECLINE", "APPROVE", "NEUTRAL"].contains(preference)
        else { return GoogleError.invalidArgument("refundPreference is required.") }
        guard body["sampleContentProvided"] is Bool else {
            return GoogleError.invalidArgument("sampleContentProvided is required.")
        }
        if let raw = body["consumptionPercentageMilliunits"] {
            guard let number = raw as? NSNumber, (0...100_000).contains(number.intValue) else {
                return GoogleError.invalidArgument("consumptionPercentageMilliunits must be between 0 and 100000.")
            }
        }
        if let raw = body["consumptionUsageEvents"] {
            guard let events = raw as? [[String: Any]], events.count <= 1000 else {
                return GoogleError.invalidArgument("consumptionUsageEvents: at most 1000 events.")
            }
            for event in events {
                if let text = event["consumptionItemDescription"] as? String, text.unicodeScalars.count > 5000 {
                    return GoogleError.invalidArgument("consumptionItemDescription: at most 5000 characters.")
                }
                if let location = event["location"] as? [String: Any], !(location["regionCode"] is String) {
                    return GoogleError.invalidArgument("location.regionCode is required.")
                }
            }
        }
        state.reviews.record(
            app: app, orderId: orderId, body: String(decoding: request.body, as: UTF8.self), preference: preference,
            millis: state.now)
        return .json { json in json.object { _ in } }
    }
}
