import Foundation
import StoreHTTP
import Synchronization

/// An `HTTPTransport` double: records every request and answers from a script, in order. Like the real transport it
/// does not send a request past its `leaveBy` (kept apart in `lateRequests`, no reply spent).
final class RecordingTransport: HTTPTransport {
    enum Reply: Sendable {
        case response(HTTPResponse)
        case failure(TransportError)
    }

    private let state = Mutex<(replies: [Reply], requests: [HTTPRequest], late: [HTTPRequest])>(([], [], []))
    /// Runs while a request is "in flight", before its reply (a test moves its clock there).
    private let inFlight = Mutex<(@Sendable (HTTPRequest) -> Void)?>(nil)

    func whileSending(_ hook: @escaping @Sendable (HTTPRequest) -> Void) {
        inFlight.withLock { $0 = hook }
    }

    init(_ replies: [Reply] = []) {
        state.withLock { $0.replies = replies }
    }

    func enqueue(_ replies: Reply...) {
        state.withLock { $0.replies += replies }
    }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var remainingReplies: Int { state.withLock { $0.replies.count } }
    var lateRequests: [HTTPRequest] { state.withLock { $0.late } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let leaveBy = request.leaveBy, ContinuousClock.now > leaveBy {
            state.withLock { $0.late.append(request) }
            throw TransportError(code: .late, request: "\(request.method) \(request.url.path)", message: "late")
        }
        let reply: Reply? = state.withLock { state in
            state.requests.append(request)
            return state.replies.isEmpty ? nil : state.replies.removeFirst()
        }
        inFlight.withLock { $0 }?(request)
        switch reply {
        case .response(let response): return response
        case .failure(let error): throw error
        case nil: throw TransportError(code: .connection, request: "test", message: "no scripted reply left")
        }
    }
}

extension RecordingTransport.Reply {
    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> Self {
        var all = headers
        all["content-type"] = "application/json"
        return .response(HTTPResponse(status: status, headers: all, body: Data(body.utf8)))
    }

    static func json(_ status: Int, data: Data) -> Self {
        .response(HTTPResponse(status: status, headers: ["content-type": "application/json"], body: data))
    }

    static func token(_ value: String = "ya29.test-token", expiresIn: Int = 3600) -> Self {
        .json(200, #"{"access_token":"\#(value)","token_type":"Bearer","expires_in":\#(expiresIn)}"#)
    }

    static func timeout() -> Self {
        .failure(TransportError(code: .timeout, request: "GET /x", message: "timed out"))
    }
}

extension HTTPRequest {
    /// The query as name → value, percent-decoded.
    var queryItems: [String: String] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    }

    var isTokenRequest: Bool { method == "POST" }
}
