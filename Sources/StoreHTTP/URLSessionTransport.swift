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
        configuration.httpMaximumConnectionsPerHost = 16
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
            (data, response) = try await session.data(for: urlRequest)
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

private final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
