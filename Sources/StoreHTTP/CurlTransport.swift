import CCurl
import Foundation

/// ``HTTPTransport`` over libcurl's multi interface, on one thread of its own.
///
/// Not FoundationNetworking's `URLSession` (libcurl too, one layer up): it decodes every response header as UTF-8
/// and fails the whole transfer on a byte that is not, so a proxy or store adding one odd header made even a 200
/// unreadable. Header fields are bytes here (RFC 9110 §5.5): a value that is not UTF-8 is read as ISO-8859-1.
///
/// Like `URLSession` before it, it honours `HTTPS_PROXY` / `NO_PROXY` (libcurl reads them), always verifies TLS
/// certificates, speaks only http and https, and never follows a redirect: the stores' APIs do not redirect, and
/// following one would carry the `Authorization` header to another host. A 3xx answer is returned as it is.
/// Every call is handed to the store at once: there is no per-host connection limit (a call the quota gate granted
/// must not wait for another call's answer to free a connection). Connections stay open between calls, up to 512
/// (``CurlLoop``), so a host is reached again on a connection of an earlier burst of calls.
public final class CurlTransport: HTTPTransport {
    /// Answers larger than this are refused (a runaway or hostile body must not exhaust memory).
    public let maxResponseBytes: Int
    private let loop: CurlLoop

    /// Creates a transport and starts its thread.
    /// - Parameter maxResponseBytes: the largest body accepted (default 16 MiB; a full Google page is ~300 KiB).
    public init(maxResponseBytes: Int = 16 << 20) {
        self.maxResponseBytes = maxResponseBytes
        loop = CurlLoop()
        loop.start()
    }

    deinit { loop.shutdown() }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let transfer = CurlTransfer(request, limit: maxResponseBytes)
        let loop = loop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }

    /// Hands the request to the loop without a cancellation handler: cancelling the caller no longer reaches it, and
    /// no task is started to shield it (one per Google call otherwise).
    public func sendToCompletion(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = CurlTransfer(request, limit: maxResponseBytes)
        let loop = loop
        return try await withCheckedThrowingContinuation { continuation in
            transfer.continuation = continuation
            loop.submit(transfer)
        }
    }
}

/// One request on its way: what the callbacks collect, and how the caller is answered. Touched by the loop's thread
/// only, once submitted, except ``cancelRequested`` (under the loop's lock).
final class CurlTransfer: @unchecked Sendable {
    let request: HTTPRequest
    let limit: Int
    var continuation: CheckedContinuation<HTTPResponse, any Error>?
    var cancelRequested = false
    var handle: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var body = Data()
    var headers: [String: String] = [:]
    var tooLarge = false
    /// When the first status line came (``HTTPResponse/answeredAt``).
    var answeredAt: ContinuousClock.Instant?

    init(_ request: HTTPRequest, limit: Int) {
        self.request = request
        self.limit = limit
    }

    /// The request's method and path, never its query or headers (they may hold tokens).
    var label: String { "\(request.method) \(request.url.path)" }

    /// Answers the caller, once.
    func finish(_ result: Result<HTTPResponse, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    /// Takes in body bytes; false when they would pass the limit (the transfer is then aborted).
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= limit else {
            tooLarge = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Takes in one header line as libcurl hands it over, CRLF included. A status line starts a new response (after
    /// a `100 Continue` or a proxy's `CONNECT` answer), so the fields before it are dropped.
    func receiveHeader(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: "HTTP/".utf8) {
            if answeredAt == nil { answeredAt = .now }
            headers = [:]
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = Self.text(line[..<colon]).lowercased()
        let value = Self.text(line[(colon + 1)...])
        guard !name.isEmpty else { return }
        if name == "content-length", let length = Int(value), length > 0 {
            body.reserveCapacity(min(length, limit))
        }
        // Repeated fields combine as one list (RFC 9110 §5.3).
        headers[name] = headers[name].map { "\($0), \(value)" } ?? value
    }

    /// Bytes as text, surrounding whitespace and line end trimmed: UTF-8 when they are, ISO-8859-1 otherwise (each
    /// byte one character, so nothing is lost and nothing fails).
    static func text(_ bytes: UnsafeRawBufferPointer.SubSequence) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        let trimmed = bytes[first...last]
        if let text = String(validating: trimmed, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(trimmed.map { Unicode.Scalar($0) }))
    }
}
