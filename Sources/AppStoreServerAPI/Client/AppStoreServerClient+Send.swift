import Foundation
import Logging
import RateLimiting
import StoreHTTP

extension AppStoreServerClient {
    /// Sends `request` to the configured environment and, for transaction lookups answered with 4040010 when
    /// fallback is on, to sandbox; returns the decoded answer and the environment that gave it.
    func perform<Response: Decodable & Sendable>(
        _ request: APIRequest, purpose: CallPurpose, as type: Response.Type = Response.self
    ) async throws -> (Response, Environment) {
        let first = configuration.environment
        do {
            return (try await send(request, environment: first, purpose: purpose), first)
        } catch let error as AppStoreServerAPIError where shouldFallBack(after: error, request: request) {
            logger.debug(
                "transaction not found in production, asking sandbox",
                metadata: ["app": "\(configuration.app)", "request": "\(request.label)"])
            return (try await send(request, environment: .sandbox, purpose: purpose), .sandbox)
        }
    }

    /// Whether a failed lookup should be asked again in sandbox.
    func shouldFallBack(after error: AppStoreServerAPIError, request: APIRequest) -> Bool {
        configuration.sandboxFallback && configuration.environment == .production && request.isTransactionLookup
            && error.apiErrorCode?.meansTransactionNotFound == true
    }

    /// One logical call with retries; each attempt passes the quota gate.
    func send<Response: Decodable & Sendable>(
        _ request: APIRequest, environment: Environment, purpose: CallPurpose
    ) async throws -> Response {
        let app = configuration.app
        let base = configuration.baseURL(for: environment)
        // Named once per call: errors and the decoder take it whether or not they need it.
        let label = request.label
        guard let url = request.url(base: base) else {
            throw AppStoreServerAPIError(
                code: .configuration, message: "cannot build a URL on \(base)", app: app, request: label)
        }
        return try await configuration.retryPolicy.run(
            timing: timing,
            isRetryable: { ($0 as? AppStoreServerAPIError)?.isRetryable ?? false },
            retryAfter: { ($0 as? AppStoreServerAPIError)?.retryAfter }
        ) { attempt in
            var (response, token, signedNow) = try await exchange(
                request, url: url, environment: environment, purpose: purpose, attempt: attempt)
            if response.status == 401, !signedNow {
                // A token kept from an earlier call (across a clock step or a key rotation): one more try with a
                // freshly signed one. A token signed for this call refused means the credentials are wrong for
                // every call: the run stops without retrying (exit 78).
                tokens.invalidate(token)
                logger.info("Apple refused a kept bearer token; signing a new one", metadata: ["app": "\(app)"])
                (response, token, signedNow) = try await exchange(
                    request, url: url, environment: environment, purpose: purpose, attempt: attempt)
            }
            if let error = Self.error(for: response, app: app, request: label, now: now()) {
                if error.isRetryable {
                    logger.info(
                        "the App Store Server API answered with a retryable error",
                        metadata: ["app": "\(app)", "request": "\(label)", "error": "\(error)"])
                }
                throw error
            }
            return try Self.decode(
                Response.self, from: response, maxBytes: configuration.maxResponseBytes, app: app, request: label)
        }
    }

    /// One HTTP exchange through the quota gate, its answer reported to the gate; returns the answer, the bearer
    /// token it carried and whether it was signed for this exchange.
    private func exchange(
        _ request: APIRequest, url: URL, environment: Environment, purpose: CallPurpose, attempt: Int
    ) async throws -> (HTTPResponse, String, Bool) {
        let app = configuration.app
        let api = environment == .sandbox && configuration.sandboxBuckets ? request.api.sandboxFallback : request.api
        var (token, signedNow) = ("", false)
        let response: HTTPResponse
        do {
            response = try await quota.sendGranted(app: app, api: api, purpose: purpose) { leaveBy in
                // The token is signed after the grant: a long wait at the gate must not age it.
                (token, signedNow) = try tokens.issue()
                var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
                if request.body != nil { headers["Content-Type"] = "application/json" }
                var http = HTTPRequest(
                    method: request.method, url: url, headers: headers, body: request.body,
                    timeout: configuration.requestTimeout)
                http.leaveBy = leaveBy
                logger.debug(
                    "calling the App Store Server API",
                    metadata: [
                        "app": "\(app)", "request": "\(request.label)", "environment": "\(environment)",
                        "attempt": "\(attempt)",
                    ])
                return try await transport.send(http)
            }
        } catch let error as TransportError {
            throw AppStoreServerAPIError(
                code: error.code == .configuration ? .configuration : .transport,
                message: "\(error.code.rawValue): \(error.message)", app: app,
                request: request.label, isRetryable: error.isRetryable)
        }
        if response.status == 429 {
            let retryAfter = response.header("Retry-After").flatMap { RetryAfter.seconds(from: $0, now: now()) }
            await quota.report(app: app, api: api, feedback: .throttled(retryAfter: retryAfter))
        } else {
            await quota.report(app: app, api: api, feedback: .accepted)
        }
        return (response, token, signedNow)
    }
}
