import Foundation

/// One HTTP request to a store.
public struct HTTPRequest: Sendable {
    /// GET, POST, ...
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields. `Authorization` values are never logged.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// How long the whole exchange may take.
    public var timeout: Double
    /// The latest moment the request may leave (the quota gate's, see `QuotaGate.acquire`): a transport that gets to
    /// it later does not send it and throws ``TransportError`` `.late`, so the caller asks the gate again rather than
    /// reach the store in a later window's count than the one the gate counted it in.
    public var leaveBy: ContinuousClock.Instant?
    /// The moment after which the request must not leave at all, whatever the quota gate grants (an answer to a store
    /// whose deadline passes then): a transport that gets to it later does not send it and throws ``TransportError``
    /// `.pastDeadline`. Taken from ``SendDeadline/latest`` when the request is made.
    public var notAfter: ContinuousClock.Instant?

    /// The timeout of a request made without one, in seconds.
    public static let defaultTimeout: Double = 30

    /// Creates a request.
    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil,
        timeout: Double = HTTPRequest.defaultTimeout
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        notAfter = SendDeadline.latest
    }
}

/// The deadline of the calls a task makes (``HTTPRequest/notAfter``), set around a call whose answer is worthless
/// after it: every request the call's client makes inside, its retries and its sign-in included, carries it.
public enum SendDeadline {
    /// The deadline of the requests made in this task, nil for none.
    @TaskLocal public static var latest: ContinuousClock.Instant?
}

/// A store's answer.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// When the answer's first byte came back, taken by the transport's own thread; `nil` when the transport does
    /// not say. The store counted the request no later than this, however long the caller took to resume.
    public var answeredAt: ContinuousClock.Instant?

    /// Creates a response.
    public init(status: Int, headers: [String: String], body: Data, answeredAt: ContinuousClock.Instant? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.answeredAt = answeredAt
    }

    /// A header by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends requests. The production implementation is ``CurlTransport``; tests wrap it to script faults.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the answer, whatever its status.
    /// - Throws: ``TransportError`` for timeouts, refused or dropped connections and oversized bodies.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse

    /// Sends a request and waits for its answer even when the calling task is cancelled meanwhile: a call the quota
    /// gate granted is counted by the store whether or not its answer is awaited, so it is let finish (its own
    /// timeout bounds it). By default ``send(_:)`` in a task of its own; ``CurlTransport`` needs none.
    func sendToCompletion(_ request: HTTPRequest) async throws -> HTTPResponse
}

extension HTTPTransport {
    public func sendToCompletion(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await Task { try await send(request) }.value
    }
}

/// A failure below HTTP: no answer, or an answer too big to accept.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The request was sent and no (whole) answer came in time.
        case timeout
        /// No connection, or one lost or out of time before the request was sent.
        case connection
        case tooLarge, invalidResponse
        /// Not sent: it would have left after its ``HTTPRequest/leaveBy``.
        case late
        /// Not sent: it would have left after its ``HTTPRequest/notAfter`` (never retried).
        case pastDeadline
        /// This host cannot make the call as configured: the store's TLS certificate was not trusted (a proxy that
        /// intercepts TLS, a missing CA bundle), the URL is malformed, or libcurl refused an option.
        /// Retrying changes nothing (never retried; exit 78).
        case configuration
    }

    /// What went wrong.
    public var code: Code
    /// The request's method and path (never its query or headers, which may hold tokens).
    public var request: String
    /// More detail.
    public var message: String

    /// Creates the error.
    public init(code: Code, request: String, message: String) {
        self.code = code
        self.request = request
        self.message = message
    }

    /// Timeouts and dropped connections may succeed when retried.
    public var isRetryable: Bool { code == .timeout || code == .connection || code == .invalidResponse }

    public var description: String { "\(request): \(code.rawValue): \(message)" }
}
