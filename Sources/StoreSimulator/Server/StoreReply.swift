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

    /// A JSON reply written by a closure, kept as the writer's bytes (a Notification History page is some 300 KB:
    /// a `String` made of it was validated and copied once more on its way to the wire).
    static func json(_ status: Int = 200, _ write: (inout JSONWriter) -> Void) -> StoreReply {
        var writer = JSONWriter()
        write(&writer)
        return StoreReply(status: status, body: "", bytes: writer.utf8)
    }

    /// Makes a JSON body invalid JSON while keeping its length honest (a binary body stays as it is).
    mutating func malform() {
        guard var json = bytes else {
            if body.hasSuffix("}") { body.removeLast() }
            body += ",\"unterminated"
            return
        }
        guard contentType.hasPrefix("application/json") else { return }
        if json.last == UInt8(ascii: "}") { json.removeLast() }
        json.append(contentsOf: ",\"unterminated".utf8)
        bytes = json
    }
}
