import Foundation
import StoreHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Header fields are bytes (RFC 9110 §5.5). A proxy or a store that sends one byte that is not UTF-8 in any header
/// made URLSession fail the whole answer (`connection: -1`), a 200 included: the transport reads them as bytes.
@Suite struct TransportHeaderBytesTests {
    @Test func anAnswerWithANonUTF8HeaderByteIsRead() async throws {
        var answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Served-By: caf".utf8)
        answer += [0xE9, 0xFF] + Array(" node\r\nRetry-After: 7\r\nX-Empty:\r\n".utf8)
        answer += Array("Content-Length: 17\r\nConnection: close\r\n\r\n{\"voided\": [1,2]}".utf8)
        let server = try RawHTTPServer(answer: answer)
        let url = URL(string: "http://127.0.0.1:\(server.port)/androidpublisher/v3/x")!
        let sent = ContinuousClock.now
        let response = try await CurlTransport().send(HTTPRequest(url: url, timeout: 10))
        #expect(response.status == 200)
        // The transport's own time of the answer (the quota gate paces by it).
        let answeredAt = try #require(response.answeredAt)
        #expect(answeredAt >= sent && answeredAt <= .now)
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"voided\": [1,2]}")
        // Each byte that is not UTF-8 is read as ISO-8859-1: é and ÿ.
        #expect(response.header("X-Served-By") == "caf\u{E9}\u{FF} node")
        #expect(response.header("retry-after") == "7")
        #expect(response.header("x-empty") == "")
        #expect(response.header("content-type") == "application/json")
    }

    @Test func aStatusLineStartsTheFieldsAfresh() async throws {
        // A 100 Continue before the answer: its fields are not the answer's.
        var answer = Array("HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n".utf8)
        answer += Array("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n".utf8)
        let server = try RawHTTPServer(answer: answer)
        let url = URL(string: "http://127.0.0.1:\(server.port)/x")!
        let response = try await CurlTransport().send(HTTPRequest(method: "POST", url: url, body: Data("a=1".utf8)))
        #expect(response.status == 429)
        #expect(response.header("x-interim") == nil)
        #expect(response.header("retry-after") == "30")
        #expect(server.requestText().hasPrefix("POST /x HTTP/1.1\r\n"))
        #expect(server.requestText().hasSuffix("\r\n\r\na=1"))
    }
}

/// A server on loopback that answers one connection with fixed bytes, written as they are (no HTTP library could
/// send a header byte that is not UTF-8), and keeps what it was sent.
final class RawHTTPServer: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let lock = NSLock()
    private var received: [UInt8] = []

    init(answer: [UInt8]) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound, listen(socket, 1) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve(answer) }
        thread.start()
    }

    deinit { close(socket) }

    /// What the client sent, as text.
    func requestText() -> String { lock.withLock { String(decoding: received, as: UTF8.self) } }

    /// Reads the request (through its body, when it announces one), answers, and closes.
    private func serve(_ answer: [UInt8]) {
        let connection = accept(socket, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var request: [UInt8] = []
        while !Self.complete(request) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            request += buffer[..<count]
        }
        lock.withLock { received = request }
        _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    private static func complete(_ request: [UInt8]) -> Bool {
        let text = String(decoding: request, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<end.lowerBound].lowercased()
        guard let field = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(field.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return true }
        return text[end.upperBound...].utf8.count >= length
    }
}
