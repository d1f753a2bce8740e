import Foundation
import StoreHTTP
import Synchronization

/// An ``HTTPTransport`` that records requests and answers from a script (the last answer repeats).
final class RecordingTransport: HTTPTransport {
    enum Answer: Sendable {
        case response(HTTPResponse)
        case failure(TransportError)
    }

    private let state: Mutex<(requests: [HTTPRequest], answers: [Answer])>

    init(_ answers: [Answer]) {
        state = Mutex((requests: [], answers: answers))
    }

    static func json(_ status: Int, _ body: String, headers: [String: String] = [:]) -> Answer {
        .response(HTTPResponse(status: status, headers: headers, body: Data(body.utf8)))
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
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
}
