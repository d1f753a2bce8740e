/// Sends each request to its endpoint through the same steps a store takes: authentication, quota, then the
/// answer, with the fault schedule spoiling some on the way. Quota is granted before faults strike, so a call
/// answered with a 5xx or a dropped connection still counts as granted.
///
/// URL layout (one port): Google's API at `/androidpublisher/v3/...` and its token endpoint at `/token`; Apple
/// production at `/inApps/...` and Apple sandbox at `/sandbox/inApps/...`; the admin API at `/admin/...`.
struct StoreRouter {
    let state: SimulatorState

    func route(_ request: StoreRequest) async -> StoreReply {
        let path = request.segments
        if path.first == "admin" {
            return AdminEndpoint(state: state).handle(request)
        }
        if path == ["token"] {
            return await serve(.googleToken, request) { _ in
                (QuotaLedger.Key(app: "google-oauth", environment: nil, endpoint: .googleToken), nil, false)
            } answer: { faults, _ in
                GoogleTokenEndpoint(state: state).handle(request, faults: faults)
            }
        }
        if path.count >= 6, path[0] == "androidpublisher", path[1] == "v3", path[2] == "applications",
            path[4] == "purchases", request.method == "GET"
        {
            return await routeGoogle(request, packageName: path[3], rest: Array(path[5...]))
        }
        if path.count >= 5, path[0] == "androidpublisher", path[1] == "v3", path[2] == "applications",
            path[4] == "orders:batchGet" || (path[4] == "orders" && path.count == 6), request.method == "GET"
        {
            return await routeGoogle(request, packageName: path[3], rest: Array(path[4...]))
        }
        if let reply = await routeRefundReviews(request, path: path) { return reply }
        if path.count >= 5, path[0] == "storage", path[1] == "v1", path[2] == "b", path[4] == "o",
            request.method == "GET"
        {
            return await routeStorage(request, bucket: path[3], object: path.count == 6 ? path[5] : nil)
        }
        if path == ["v1", "financeReports"], request.method == "GET" {
            return await serve(.appleFinanceReports, request) { _ in
                guard FinanceReportsEndpoint(state: state).authorized(request.bearerToken) else {
                    return (
                        nil,
                        FinanceReportsEndpoint.error(
                            401, "NOT_AUTHORIZED", "Authentication credentials are missing or invalid."), true
                    )
                }
                return (
                    QuotaLedger.Key(app: "app-store-connect", environment: nil, endpoint: .appleFinanceReports), nil,
                    true
                )
            } answer: { _, _ in
                FinanceReportsEndpoint(state: state).handle(request)
            }
        }
        let sandbox = path.first == "sandbox"
        let apple = sandbox ? Array(path.dropFirst()) : path
        if apple.count >= 3, apple[0] == "inApps" {
            return await routeApple(request, sandbox: sandbox, path: apple)
        }
        return StoreReply(status: 404, body: "Not Found\n", contentType: "text/plain")
    }

    private func routeGoogle(_ request: StoreRequest, packageName: String, rest: [String]) async -> StoreReply {
        let endpoint: SimulatorEndpoint
        if rest == ["voidedpurchases"] {
            endpoint = .googleVoidedPurchases
        } else if rest.count == 3, rest[0] == "subscriptionsv2", rest[1] == "tokens" {
            endpoint = .googleSubscriptionsV2
        } else if rest == ["orders:batchGet"] || (rest.count == 2 && rest[0] == "orders") {
            endpoint = .googleOrders
        } else {
            return GoogleError.notFound()
        }
        return await serve(endpoint, request) { faults in
            guard let token = request.bearerToken, state.accessTokenIsValid(token),
                !state.tokenExpired(token, faults: faults, endpoint: endpoint)
            else { return (nil, GoogleError.unauthenticated(), false) }
            guard state.accessToken(token, grants: GoogleTokenEndpoint.scope) else {
                return (nil, GoogleError.insufficientScope(), false)
            }
            guard let app = state.googleApp(packageName: packageName) else {
                return (nil, GoogleError.applicationNotFound(packageName), false)
            }
            return (
                QuotaLedger.Key(app: state.scenario.spec.apps[app].id, environment: nil, endpoint: endpoint), nil, false
            )
        } answer: { faults, key in
            let app = state.scenario.spec.apps.firstIndex { $0.id == key.app } ?? 0
            switch endpoint {
            case .googleVoidedPurchases:
                return VoidedPurchasesEndpoint(state: state).handle(request, app: app, faults: faults)
            case .googleOrders:
                guard !state.options.ordersPermissionDenied else { return GoogleError.permissionDenied() }
                return rest.count == 2
                    ? OrdersEndpoint(state: state).get(app: app, orderId: rest[1])
                    : OrdersEndpoint(state: state).batchGet(request, app: app)
            default:
                return SubscriptionsV2Endpoint(state: state).handle(app: app, token: rest[2], faults: faults)
            }
        }
    }

    /// Cloud Storage: the report bucket of a Google app (``Scenario/earningsBucket(app:)``).
    private func routeStorage(_ request: StoreRequest, bucket: String, object: String?) async -> StoreReply {
        await serve(.googleStorage, request) { faults in
            guard let token = request.bearerToken, state.accessTokenIsValid(token),
                !state.tokenExpired(token, faults: faults, endpoint: .googleStorage)
            else { return (nil, GoogleError.unauthenticated(), false) }
            guard state.accessToken(token, grants: GoogleTokenEndpoint.storageScope) else {
                return (nil, GoogleError.insufficientScope(), false)
            }
            guard
                let app = state.scenario.spec.apps.indices.first(where: {
                    state.scenario.spec.apps[$0].platform == .google && Scenario.earningsBucket(app: $0) == bucket
                })
            else { return (nil, GoogleError.notFound(), false) }
            return (
                QuotaLedger.Key(app: state.scenario.spec.apps[app].id, environment: nil, endpoint: .googleStorage), nil,
                false
            )
        } answer: { _, key in
            let app = state.scenario.spec.apps.firstIndex { $0.id == key.app } ?? 0
            let endpoint = CloudStorageEndpoint(state: state)
            return object.map { endpoint.get(request, app: app, name: $0) } ?? endpoint.list(request, app: app)
        }
    }

    private func routeApple(_ request: StoreRequest, sandbox: Bool, path: [String]) async -> StoreReply {
        let endpoint: SimulatorEndpoint
        var transactionId = ""
        switch (request.method, path.count, path[1], path[2]) {
        case ("GET", 5, "v2", "refund") where path[3] == "lookup":
            endpoint = .appleRefundHistory
            transactionId = path[4]
        case ("POST", 4, "v1", "notifications") where path[3] == "history":
            endpoint = .appleNotificationHistory
        case ("GET", 4, "v1", "subscriptions"):
            endpoint = .appleSubscriptionStatuses
            transactionId = path[3]
        case ("GET", 4, "v2", "history"):
            endpoint = .appleTransactionHistory
            transactionId = path[3]
        case ("PUT", 5, "v2", "transactions") where path[3] == "consumption":
            endpoint = .appleConsumption
            transactionId = path[4]
        default:
            return StoreReply(status: 404, body: "Not Found\n", contentType: "text/plain")
        }
        return await serve(endpoint, request) { faults in
            guard !state.tokenExpired(request.bearerToken, faults: faults, endpoint: endpoint),
                let app = AppleBearerVerifier(state: state).verify(request.bearerToken)
            else { return (nil, AppleError.unauthorized(), true) }
            let key = QuotaLedger.Key(
                app: state.scenario.spec.apps[app].id, environment: sandbox ? "sandbox" : "production",
                endpoint: endpoint)
            return (key, nil, true)
        } answer: { faults, key in
            let app = state.scenario.spec.apps.firstIndex { $0.id == key.app } ?? 0
            switch endpoint {
            case .appleRefundHistory:
                return RefundHistoryEndpoint(state: state).handle(
                    request, app: app, sandbox: sandbox, transactionId: transactionId, faults: faults)
            case .appleNotificationHistory:
                return NotificationHistoryEndpoint(state: state).handle(
                    request, app: app, sandbox: sandbox, faults: faults)
            case .appleSubscriptionStatuses:
                return SubscriptionStatusesEndpoint(state: state).handle(
                    request, app: app, sandbox: sandbox, transactionId: transactionId, faults: faults)
            case .appleConsumption:
                return ConsumptionEndpoint(state: state).handle(
                    request, app: app, sandbox: sandbox, transactionId: transactionId)
            default:
                return TransactionHistoryEndpoint(state: state).handle(
                    request, app: app, sandbox: sandbox, transactionId: transactionId, faults: faults)
            }
        }
    }

    /// The common steps. `authorize` names the quota counter or answers with a refusal (and says whether the
    /// endpoint is Apple's, for the error shapes); `answer` makes the reply.
    func serve(
        _ endpoint: SimulatorEndpoint, _ request: StoreRequest,
        authorize: (Set<FaultKind>) -> (QuotaLedger.Key?, StoreReply?, Bool),
        answer: (Set<FaultKind>, QuotaLedger.Key) -> StoreReply
    ) async -> StoreReply {
        // A store counts a call when its request arrives, before any work of its own on it (checking the token
        // takes CPU, which a loaded host hands out late).
        let arrived = state.quotaNow
        state.track(endpoint, entering: true)
        defer { state.track(endpoint, entering: false) }
        var reply = await serveUnlabelled(endpoint, request, arrived: arrived, authorize: authorize, answer: answer)
        // The way back: admitted (or refused) at arrival, answered after the configured latency.
        let delay = state.latency.draw()
        if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }
        // Apple's clients compare the content type with "application/json" exactly; Google names the charset.
        if reply.contentType.hasPrefix("application/json") {
            reply.contentType = endpoint.isApple ? "application/json" : "application/json; charset=UTF-8"
        }
        return reply
    }

    /// The answers of the faults that stand for a store's documented odd answers (see ``FaultKind``).
    private func oddAnswer(_ faults: Set<FaultKind>, endpoint: SimulatorEndpoint, call: UInt64) -> StoreReply? {
        let apple = endpoint.isApple
        if faults.contains(.notFoundRetryable), apple {
            return AppleError.notFoundRetryable(call)
        }
        if faults.contains(.notFoundFinal), apple {
            return AppleError.notFoundFinal(call)
        }
        if faults.contains(.gone), endpoint == .googleSubscriptionsV2 {
            return GoogleError.gone()
        }
        if faults.contains(.dailyLimit), !apple, endpoint != .googleToken {
            return GoogleError.dailyLimitExceeded(call)
        }
        if faults.contains(.oddRetryAfter) {
            var reply = apple ? AppleError.serverError(retryable: true) : GoogleError.serverError(second: true)
            reply.retryAfter = OddRetryAfter.value(call)
            return reply
        }
        return nil
    }

    private func serveUnlabelled(
        _ endpoint: SimulatorEndpoint, _ request: StoreRequest, arrived: Int64,
        authorize: (Set<FaultKind>) -> (QuotaLedger.Key?, StoreReply?, Bool),
        answer: (Set<FaultKind>, QuotaLedger.Key) -> StoreReply
    ) async -> StoreReply {
        let (faults, slowMillis, call) = state.faults.draw(for: endpoint)
        let (key, refusal, apple) = authorize(faults)
        guard let key else { return refusal ?? StoreReply(status: 401, body: "") }
        var held = false
        switch state.appFault(key.app) {
        case .unauthorized:
            return apple ? AppleError.unauthorized() : GoogleError.unauthenticated()
        case .hang:
            // Held, not yet counted, until the fault is lifted (a store that stopped answering this app); it
            // arrives, for the quota, when it is let through.
            held = true
            while state.appFault(key.app) == .hang, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(20))
            }
        case nil:
            break
        }
        let quotas = state.quotas
        let at = held ? state.quotaNow : arrived
        let decision = state.ledger.admit(
            key, at: at, rules: quotas.rules(for: endpoint, sandbox: key.environment == "sandbox"))
        if case .refused(let rule, let retryAt) = decision {
            return apple
                ? AppleError.rateLimitExceeded(retryAtMillis: retryAt)
                : GoogleError.quotaExceeded(rule: rule, style: quotas.googleStyle)
        }
        if faults.contains(.slow) {
            try? await Task.sleep(for: .milliseconds(slowMillis))
        }
        if let reply = oddAnswer(faults, endpoint: endpoint, call: call) { return reply }
        if faults.contains(.serverError) {
            let second = request.segments.count % 2 == 0
            return apple ? AppleError.serverError(retryable: second) : GoogleError.serverError(second: second)
        }
        if faults.contains(.dropConnection) {
            return StoreReply(status: 500, body: "", delivery: .drop)
        }
        var reply = answer(faults, key)
        if faults.contains(.malformedJSON) { reply.malform() }
        if faults.contains(.truncatedBody) { reply.delivery = .truncate }
        return reply
    }
}
