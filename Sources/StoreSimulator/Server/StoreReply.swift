/// An answer before it is written: status, body, extra headers, and how a fault spoils the writing.
struct StoreReply: Sendable {
    /// How the reply goes onto the wire.
    enum Delivery: Sendable {
        case normal
        /// Close the connection without answering.
        case drop
        /// Promise the whole body in `Content-Length`, send half, close.
        case truncate
    }

    var status: Int
    var body: String
    /// A binary body (report files), sent instead of `body` when set.
    var bytes: [UInt8]?
    var contentType = "application/json; charset=utf-8"
    /// The `Retry-After` header (Apple: UNIX time in milliseconds).
    var retryAfter: String?
    var delivery = Delivery.normal

    /// A JSON reply.
    static func json(_ status: Int, _ body: String) -> StoreReply {
        StoreReply(status: status, body: body)
    }

    /// A JSON reply written by a closure.
    static func json(_ status: Int = 200, _ write: (inout JSONWriter) -> Void) -> StoreReply {
        var writer = JSONWriter()
        write(&writer)
        return StoreReply(status: status, body: writer.text)
    }

    /// Makes the body invalid JSON while keeping its length honest.
    mutating func malform() {
        if body.hasSuffix("}") { body.removeLast() }
        body += ",\"unterminated"
    }
}
