import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// Runs one call to a report API: the quota gate first, then the request by the time the grant allows, the store's
/// answer reported back to the gate, and retries of failures that may pass (5xx, 429, timeouts) within StoreHTTP's
/// `RetryPolicy`.
struct ReportCall: Sendable {
    var app: String
    var api: StoreAPI
    var transport: any HTTPTransport
    var gate: any QuotaGate
    var policy: RetryPolicy
    var timing: RetryTiming
    var logger: Logger

    /// Sends the request `makeRequest` builds (afresh for every attempt) and returns a 2xx or 404 answer.
    /// - Parameter renew: called once after a 401, before one more attempt (a fresh token).
    /// - Throws: ``PayoutError`` (`.configuration` for 401/403, `.unavailable` for 5xx/429/transport failures when
    ///   the retries are spent, `.badAnswer` otherwise), `QuotaError`, `CancellationError`.
    func send(
        _ label: String, purpose: CallPurpose, makeRequest: @Sendable () async throws -> HTTPRequest,
        renew: @Sendable () async -> Void = {}
    ) async throws -> HTTPResponse {
        var renewed = false
        return try await policy.run(
            timing: timing, isRetryable: { ($0 as? PayoutError)?.isRetryable ?? false },
            retryAfter: { ($0 as? PayoutError)?.retryAfter }
        ) { _ in
            while true {
                let request = try await makeRequest()
                let response: HTTPResponse
                do {
                    response = try await gate.sendGranted(app: app, api: api, purpose: purpose) { leaveBy in
                        var sending = request
                        sending.leaveBy = leaveBy
                        return try await transport.send(sending)
                    }
                } catch let error as TransportError {
                    await gate.report(app: app, api: api, feedback: .accepted)
                    throw PayoutError(
                        error.code == .configuration ? .configuration : error.isRetryable ? .unavailable : .badAnswer,
                        "\(label): \(error.code.rawValue): \(error.message)")
                }
                let retryAfter = response.header("retry-after").flatMap { RetryAfter.seconds(from: $0, now: Date()) }
                await gate.report(
                    app: app, api: api,
                    feedback: response.status == 429 ? .throttled(retryAfter: retryAfter) : .accepted)
                logger.debug("report call answered", metadata: ["request": "\(label)", "status": "\(response.status)"])
                if response.status == 401 && !renewed {
                    renewed = true
                    await renew()
                    continue
                }
                try Self.check(response, label: label, app: app, retryAfter: retryAfter)
                return response
            }
        }
    }

    /// Throws the error an answer means; returns for 2xx and 404.
    static func check(_ response: HTTPResponse, label: String, app: String, retryAfter: Double?) throws {
        let status = response.status
        if (200..<300).contains(status) || status == 404 { return }
        let detail = String(decoding: response.body.prefix(300), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ")
        let message = "app \(app): \(label) answered \(status): \(detail)"
        switch status {
        case 401, 403:
            throw PayoutError(
                .configuration, message + " (check the key, its role and the account's access)", httpStatus: status)
        case 429, 500...599:
            throw PayoutError(.unavailable, message, httpStatus: status, retryAfter: retryAfter)
        default:
            throw PayoutError(.badAnswer, message, httpStatus: status)
        }
    }
}
