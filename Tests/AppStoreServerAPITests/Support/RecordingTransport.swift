import Foundation
import StoreHTTP
import Synchronization

/// An ``HTTPTransport`` that records requests and answers from a script (the last answer repeats). A request past
/// its leave-by time is refused unsent (`.late`), as `CurlTransport` does, and counted apart.
final class RecordingTransport: HTTPTransport {
    enum Answer: Sendable {
        case response(HTTPResponse)
        case failure(TransportError)
    }

    private let state: Mutex<(requests: [HTTPRequest], answers: [Answer], late: Int)>

    init(_ answers: [Answer]) {
        state = Mutex((requests: [], answers: answers, late: 0))
    }

    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> Answer {
        .response(HTTPResponse(status: status, headers: headers, body: Data(body.utf8)))
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let leaveBy = request.leaveBy, leaveBy < .now {
            state.withLock { $0.late += 1 }
            throw TransportError(
                code: .late, request: "GET", message: "the grant's time passed before the request left")
        }
        let answer = state.withLock { state in
            state.requests.append(request)
            return state.answers.count > 1 ? state.answers.removeFirst() : state.answers[0]
        }
        switch answer {
        case .response(let response): return response
        case .failure(let error): throw error
        }
    }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    /// Requests refused unsent for their leave-by time.
    var lateRequests: Int { state.withLock { $0.late } }
}
