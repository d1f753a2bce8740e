import Foundation
import StoreHTTP
import Testing

/// The transport reuses its libcurl handles (issue 39): a call on a reused handle carries nothing of the one before
/// it (method, body, header fields); and a granted call sent to completion is answered even to a cancelled caller,
/// without a task of its own.
@Suite struct TransportHandleReuseTests {
    @Test func aCallSentToCompletionIsAnsweredToACancelledCaller() async throws {
        let transport = CurlTransport()
        let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
        let server = try RawHTTPServer(answer: ok)
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/granted")!, timeout: 10)
        let completed = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.sendToCompletion(request)
        }
        #expect(try await completed.value.status == 200)
        #expect(server.requestText().hasPrefix("GET /granted HTTP/1.1\r\n"))
        // The same call by send(_:) is not made.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request)
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }

    @Test func aCallAfterAPostIsAPlainGet() async throws {
        let transport = CurlTransport()
        let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
        let first = try RawHTTPServer(answer: ok)
        let post = HTTPRequest(
            method: "POST", url: URL(string: "http://127.0.0.1:\(first.port)/first")!,
            headers: ["X-First-Only": "yes", "Content-Type": "application/json"], body: Data("{\"a\":1}".utf8),
            timeout: 10)
        #expect(try await transport.send(post).status == 200)
        #expect(first.requestText().hasPrefix("POST /first HTTP/1.1\r\n"))
        #expect(first.requestText().contains("X-First-Only: yes"))

        let second = try RawHTTPServer(answer: ok)
        let get = HTTPRequest(url: URL(string: "http://127.0.0.1:\(second.port)/second")!, timeout: 10)
        let response = try await transport.send(get)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "ok")
        let text = second.requestText()
        #expect(text.hasPrefix("GET /second HTTP/1.1\r\n"))
        #expect(!text.contains("X-First-Only"))
        #expect(!text.contains("Content-Type"))
        #expect(text.hasSuffix("\r\n\r\n"), "no body")
    }
}
