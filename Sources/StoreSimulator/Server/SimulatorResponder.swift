import Foundation
import Hummingbird

/// Adapts Hummingbird requests to ``StoreRouter`` and writes its replies, including the broken ones a fault asks
/// for: a closed connection with no answer, or a body cut short of its `Content-Length`.
struct SimulatorResponder: HTTPResponder {
    typealias Context = SimulatorRequestContext

    /// Thrown to abandon a connection after closing it.
    struct Abandoned: Error {}

    let router: StoreRouter

    func respond(to request: Request, context: Context) async throws -> Response {
        let body = try await request.body.collect(upTo: 4 << 20)
        let path = request.uri.path.split(separator: "/").map { segment in
            // Few segments hold a `%`, and Foundation's percent-decoding costs even when there is none.
            segment.utf8.contains(UInt8(ascii: "%"))
                ? String(segment).removingPercentEncoding ?? String(segment) : String(segment)
        }
        var method = request.method.rawValue
        var query = StoreRequest.parseQuery(request.uri.query)
        // Google's clients send a long GET as a POST with `X-HTTP-Method-Override: GET` and the query as a form body.
        if method == "POST",
            request.headers.contains(where: {
                $0.name.canonicalName == "x-http-method-override" && $0.value.uppercased() == "GET"
            })
        {
            method = "GET"
            query += StoreRequest.parseQuery(String(decoding: body.readableBytesView, as: UTF8.self), plusIsSpace: true)
        }
        let storeRequest = StoreRequest(
            method: method, segments: path, query: query, authorization: request.headers[.authorization],
            body: Data(body.readableBytesView))
        let reply = await router.route(storeRequest)
        var headers = HTTPFields()
        headers[.contentType] = reply.contentType
        if let retryAfter = reply.retryAfter { headers[.retryAfter] = retryAfter }
        let bytes = reply.json ?? reply.bytes.map { ByteBuffer(bytes: $0) } ?? ByteBuffer(string: reply.body)
        let close = context.closeConnection
        switch reply.delivery {
        case .normal:
            return Response(status: .init(code: reply.status), headers: headers, body: .init(byteBuffer: bytes))
        case .drop:
            await close()
            throw Abandoned()
        case .truncate:
            let half = bytes.getSlice(at: 0, length: bytes.readableBytes / 2) ?? bytes
            return Response(
                status: .init(code: reply.status), headers: headers,
                body: ResponseBody(contentLength: bytes.readableBytes) { writer in
                    try await writer.write(half)
                    await close()
                    throw Abandoned()
                })
        }
    }
}
