import Hummingbird

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
    /// A JSON body as ``JSONWriter`` wrote it, sent instead of `body` when set.
    var json: ByteBuffer?
    var contentType = "application/json; charset=utf-8"
    /// The `Retry-After` header (Apple: UNIX time in milliseconds).
    var retryAfter: String?
    var delivery = Delivery.normal

    /// A JSON reply.
    static func json(_ status: Int, _ body: String) -> StoreReply {
        StoreReply(status: status, body: body)
    }

    /// A JSON reply written by a closure, kept in the writer's buffer (a Notification History page is some 300 KB:
    /// a `String` made of it was validated and copied twice on its way to the wire).
    /// - Parameter capacity: the bytes to reserve (what the body is expected to take).
    static func json(_ status: Int = 200, capacity: Int = 256, _ write: (inout JSONWriter) -> Void) -> StoreReply {
        var writer = JSONWriter(capacity: capacity)
        write(&writer)
        return StoreReply(status: status, body: "", json: writer.buffer)
    }

    /// Makes a JSON body invalid JSON while keeping its length honest (a binary body stays as it is).
    mutating func malform() {
        guard var written = json else {
            if body.hasSuffix("}") { body.removeLast() }
            body += ",\"unterminated"
            return
        }
        if written.readableBytesView.last == UInt8(ascii: "}") { written.moveWriterIndex(to: written.writerIndex - 1) }
        written.writeString(",\"unterminated")
        json = written
    }
}
