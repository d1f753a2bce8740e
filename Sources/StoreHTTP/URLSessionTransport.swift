import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's `URLSession` (libcurl on Linux): honours `HTTPS_PROXY` / `NO_PROXY`,
/// always verifies TLS certificates (no delegate here can turn that off) and never follows a redirect: the stores'
/// APIs do not redirect, and following one would carry the `Authorization` header to another host, perhaps over
/// plain http. A 3xx answer is returned as it is.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    /// Answers larger than this are refused (a runaway or hostile body must not exhaust memory).
    public let maxResponseBytes: Int

    /// Creates a transport.
    /// - Parameter maxResponseBytes: the largest body accepted (default 16 MiB; a full Google page is ~300 KiB).
    public init(maxResponseBytes: Int = 16 << 20) {
        let configuration = URLSessionConfiguration.ephemeral
        // Above any number of calls storerecon keeps in flight to one host (up to 64 voided slices, 8 Orders calls,
        // the recheck's and Apple's concurrency): a call the quota gate granted must leave at once. Held back for a
        // free connection it would reach the store an answer time after its grant, beyond the gate's margin, and be
        // refused (seen at 1500 ms answers with 16 here).
        configuration.httpMaximumConnectionsPerHost = 256
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: RefuseRedirects(), delegateQueue: nil)
        self.maxResponseBytes = maxResponseBytes
    }

    deinit { session.invalidateAndCancel() }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = request.timeout
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let label = "\(request.method) \(request.url.path)"
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await perform(urlRequest)
        } catch let error as URLError where error.code == .cancelled && Task.isCancelled {
            throw CancellationError()
        } catch let error as URLError {
            let code: TransportError.Code = error.code == .timedOut ? .timeout : .connection
            throw TransportError(code: code, request: label, message: "\(error.code.rawValue) (\(Self.name(error)))")
        }
        guard let http = response as? HTTPURLResponse else {
            throw TransportError(code: .invalidResponse, request: label, message: "not an HTTP response")
        }
        guard data.count <= maxResponseBytes else {
            throw TransportError(
                code: .tooLarge, request: label, message: "body of \(data.count) bytes exceeds \(maxResponseBytes)")
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }

    /// Runs one request. Not `URLSession.data(for:)`: on Linux its cancellation handler calls
    /// `URLSessionTask.cancel()` while the Swift task's status lock is held, and `cancel()` waits for the session's
    /// queue, which may at that moment be finishing this very transfer and waiting for that same lock to resume the
    /// task: both wait for ever (a job hung in CI when a slice's first error cancelled the calls in flight). Here the
    /// cancellation only schedules `cancel()` on another queue.
    private func perform(_ urlRequest: URLRequest) async throws -> (Data, URLResponse) {
        let handle = CancellableTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    private static func name(_ error: URLError) -> String {
        switch error.code {
        case .timedOut: return "timed out"
        case .cannotConnectToHost: return "connection refused"
        case .networkConnectionLost: return "connection lost"
        case .cannotFindHost: return "host not found"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            return "TLS certificate rejected"
        default: return "transport error"
        }
    }
}

/// A data task that may be cancelled before or after it starts; `cancel()` never runs on the caller's thread.
private final class CancellableTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.withLock {
            self.task = task
            return self.cancelled
        }
        task.resume()
        if cancelled { Self.cancelLater(task) }
    }

    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        if let task { Self.cancelLater(task) }
    }

    private static func cancelLater(_ task: URLSessionDataTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}

private final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
