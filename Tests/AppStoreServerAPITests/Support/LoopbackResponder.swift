import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 responder on 127.0.0.1 for client tests over real sockets: answers each connection with the next
/// scripted response (the last repeats), records request heads, and closes the connection.
final class LoopbackResponder: Sendable {
    struct Canned: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String
    }

    let port: UInt16
    private let listener: Int32
    private let state: Mutex<(responses: [Canned], requests: [String])>

    init(_ responses: [Canned]) throws {
        state = Mutex((responses: responses, requests: []))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    var requests: [String] { state.withLock { $0.requests } }

    /// Stops accepting: the serving thread ends when accept fails, and closes the listener itself. Closing it here
    /// would free its number while that thread may still call accept with it, on another responder's socket.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                close(listener)
                return
            }
            let head = readRequest(connection)
            let canned = state.withLock { state in
                state.requests.append(head)
                return state.responses.count > 1 ? state.responses.removeFirst() : state.responses[0]
            }
            var text =
                "HTTP/1.1 \(canned.status) X\r\nContent-Length: \(canned.body.utf8.count)\r\nConnection: close\r\n"
            for (name, value) in canned.headers { text += "\(name): \(value)\r\n" }
            text += "\r\n" + canned.body
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                sent += count
            }
            close(connection)
        }
    }

    /// Reads the head and as much body as Content-Length says; returns the head.
    private func readRequest(_ connection: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            data += buffer[0..<count]
            let text = String(decoding: data, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let head = String(text[..<end.lowerBound])
            let length =
                head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return head }
        }
        return String(decoding: data, as: UTF8.self)
    }
}
