import Foundation
import Logging
import RateLimiting
import StoreHTTP

/// Runs one logical store call: quota gate, send, classify, report, and retry within the policy's bounds.
/// Shared by the token endpoint and the API so both obey the same rules.
struct PlayCallRunner: Sendable {
    /// What one answer means.
    enum Verdict {
        /// Done: hand the answer to the caller.
        case success(HTTPResponse)
        /// May succeed if tried again after a wait (5xx, timeout, throttled); `error` is thrown when the bounds are spent.
        case retry(PlayAPIError, retryAfter: Double?)
        /// The credentials are stale: renew them and try once more at once.
        case renewCredentials(PlayAPIError)
        /// Final.
        case fail(PlayAPIError)
    }

    var app: String
    var transport: any HTTPTransport
    var quotaGate: any QuotaGate
    var policy: RetryPolicy
    /// Whether throttled answers (429, 403 `rateLimitExceeded`, not per day) are retried after the gate was told.
    var retriesThrottled: Bool
    var runtime: PlayRuntime
    var logger: Logger

    /// Runs the call.
    /// - Parameters:
    ///   - makeRequest: builds the request for each attempt (it may fetch a fresh access token).
    ///   - classify: turns an answer into a verdict and the feedback for the quota gate.
    ///   - transportError: turns a transport failure into the error thrown when it is not retried.
    ///   - renewCredentials: called on `.renewCredentials`, twice at most per call.
    ///   - answerOnTimeout: what a call that was sent and not answered in time means, when it means something rather
    ///     than a failure (a Pub/Sub pull the server held open because nothing waited): not retried. A call that
    ///     could not be sent (no connection in time) is a failure as any.
    ///   - isolation: runs on the caller's actor, so the closures may use its state.
    func run(
        api: StoreAPI, purpose: CallPurpose, label: String,
        makeRequest: () async throws -> HTTPRequest,
        classify: (HTTPResponse) -> (Verdict, QuotaFeedback),
        transportError: (TransportError) -> PlayAPIError,
        renewCredentials: () async -> Void = {},
        answerOnTimeout: HTTPResponse? = nil,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> HTTPResponse {
        let start = runtime.now()
        var attempt = 0
        var renewals = 0
        while true {
            try Task.checkCancellation()
            attempt += 1
            let request = try await makeRequest()
            let verdict: Verdict
            var feedback: QuotaFeedback
            do {
                let (response, granted) = try await sendGranted(request, api: api, purpose: purpose, label: label)
                (verdict, feedback) = classify(response)
                if case .dailyQuotaExhausted(nil) = feedback {
                    feedback = .dailyQuotaExhausted(sentOn: PacificDay(containing: granted))
                }
                logger.debug(
                    "store call answered",
                    metadata: [
                        "api": "\(api)", "request": "\(label)", "status": "\(response.status)", "attempt": "\(attempt)",
                        // From the quota gate's grant to the answer: the log line's time less this is the grant.
                        "ms": "\(Int((runtime.now().timeIntervalSince(granted) * 1000).rounded()))",
                    ])
            } catch let error as TransportError {
                // The call may have reached the store and been counted there: count it here too.
                feedback = .accepted
                let failure = transportError(error)
                if error.code == .timeout, let answer = answerOnTimeout {
                    verdict = .success(answer)
                } else {
                    verdict = error.isRetryable ? .retry(failure, retryAfter: nil) : .fail(failure)
                }
            }
            await quotaGate.report(app: app, api: api, feedback: feedback)

            switch verdict {
            case .success(let response):
                return response
            case .fail(let error):
                throw error
            case .renewCredentials(let error):
                // Twice at most: another call may have spent the first new token's life before this one used it; a
                // third 401 means the credentials are refused.
                guard renewals < 2 else { throw error }
                renewals += 1
                attempt -= 1
                logger.info("access token rejected; signing in again", metadata: ["api": "\(api)", "app": "\(app)"])
                await renewCredentials()
            case .retry(let error, let retryAfter):
                // StoreHTTP's policy, the one the Apple client uses: full jitter, Retry-After as a floor, a wait
                // longer than maxDelay or past maxTotalTime ends the retries.
                let elapsed = runtime.now().timeIntervalSince(start)
                guard
                    let delay = policy.delay(
                        afterAttempt: attempt, elapsed: elapsed, retryAfter: retryAfter,
                        random: { runtime.random($0.upperBound) })
                else { throw error }
                // Throttling is expected under load: each one is a detail (info); the job's summary line counts them
                // and is a warning when there were any, so --quiet shows one line per job, not one per answer.
                logger.log(
                    level: error.code == .rateLimited ? .info : .warning,
                    "store call failed; retrying",
                    metadata: [
                        "api": "\(api)", "app": "\(app)", "attempt": "\(attempt)",
                        "delay": "\(String(format: "%.2f", delay))s", "error": "\(error)",
                    ])
                try await runtime.sleep(delay)
            }
        }
    }

    /// Asks the gate, and sends the request by the time its grant allows
    /// (``QuotaGate/sendGranted(app:api:purpose:onLate:_:)``).
    /// - Returns: the answer, and when its grant came.
    private func sendGranted(
        _ request: HTTPRequest, api: StoreAPI, purpose: CallPurpose, label: String
    ) async throws -> (HTTPResponse, Date) {
        var granted = runtime.now()
        let response = try await quotaGate.sendGranted(
            app: app, api: api, purpose: purpose,
            onLate: { error in
                logger.debug(
                    "a granted call reached the transport late; asking the gate again",
                    // Not the error's own request: its path holds a whole purchase token, the label a prefix.
                    metadata: [
                        "api": "\(api)", "app": "\(app)", "request": "\(label)",
                        "error": "\(error.code.rawValue): \(error.message)",
                    ])
            }
        ) { leaveBy in
            granted = runtime.now()
            var sending = request
            sending.leaveBy = leaveBy
            // A call the gate granted is let finish even when its caller is cancelled (a voided page's slice is
            // stopped because another slice failed): the store counts it whether or not the answer is awaited, and
            // a page answered is worth storing, not asking again. Cancellation stops calls still waiting for the
            // gate and retries; the request's own timeout bounds this one.
            return try await transport.sendToCompletion(sending)
        }
        return (response, granted)
    }
}
