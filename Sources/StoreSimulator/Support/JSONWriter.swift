import Hummingbird

/// Writes JSON text field by field, in the order the code says, with no model types in between: the simulator
/// writes its answers from the stores' documents, not through the clients' Codable models.
struct JSONWriter {
    /// The UTF-8 bytes written so far (appending bytes is several times cheaper than appending to a `String`: an
    /// Orders answer of 1000 orders is some 10,000 values), in the buffer a reply goes to the wire in: a Notification
    /// History page, some 300 KB, is not copied on its way out.
    private(set) var buffer: ByteBuffer
    /// The JSON text written so far.
    var text: String { String(buffer: buffer) }
    /// The UTF-8 bytes written so far, for a signature that takes bytes (no `String` in between).
    var utf8: [UInt8] { Array(buffer.readableBytesView) }
    // One entry per open object or array: whether a value has been written at that level.
    private var started: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 256) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        if let last = started.last {
            if last { buffer.writeInteger(UInt8(ascii: ",")) }
            started[started.count - 1] = true
        }
    }

    mutating func beginObject() {
        beforeValue()
        buffer.writeInteger(UInt8(ascii: "{"))
        started.append(false)
    }

    mutating func endObject() {
        started.removeLast()
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        beforeValue()
        buffer.writeInteger(UInt8(ascii: "["))
        started.append(false)
    }

    mutating func endArray() {
        started.removeLast()
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    mutating func key(_ name: String) {
        beforeValue()
        Self.appendQuoted(name, to: &buffer)
        buffer.writeInteger(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ value: String) {
        beforeValue()
        Self.appendQuoted(value, to: &buffer)
    }

    mutating func int(_ value: Int64) {
        beforeValue()
        buffer.writeString(String(value))
    }

    mutating func int(_ value: Int) {
        int(Int64(value))
    }

    mutating func bool(_ value: Bool) {
        beforeValue()
        buffer.writeString(value ? "true" : "false")
    }

    mutating func null() {
        beforeValue()
        buffer.writeString("null")
    }

    /// Inserts already-encoded JSON as one value.
    mutating func raw(_ json: String) {
        beforeValue()
        buffer.writeString(json)
    }

    mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: String, _ value: Int64) {
        key(name)
        int(value)
    }

    mutating func field(_ name: String, _ value: Int) {
        key(name)
        int(Int64(value))
    }

    mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// Writes a compact JWS (base64url parts and dots) as a string without looking for characters to escape: there
    /// are none, and a signed notification is kilobytes long.
    mutating func field(_ name: String, jws value: String) {
        assert(value.utf8.allSatisfy { $0 == UInt8(ascii: ".") || Base64URL.isAlphabet($0) }, "not a compact JWS")
        key(name)
        beforeValue()
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeString(value)
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    /// Writes the field only when the value is present.
    mutating func field(_ name: String, ifPresent value: String?) {
        if let value { field(name, value) }
    }

    /// Writes the field only when the value is present.
    mutating func field(_ name: String, ifPresent value: Int64?) {
        if let value { field(name, value) }
    }

    /// Writes an object with the body's fields.
    mutating func object(_ name: String? = nil, _ body: (inout JSONWriter) -> Void) {
        if let name { key(name) }
        beginObject()
        body(&self)
        endObject()
    }

    /// Writes an array with the body's values.
    mutating func array(_ name: String? = nil, _ body: (inout JSONWriter) -> Void) {
        if let name { key(name) }
        beginArray()
        body(&self)
        endArray()
    }

    private static func appendQuoted(_ value: String, to text: inout ByteBuffer) {
        text.writeInteger(UInt8(ascii: "\""))
        // Almost every value needs no escaping; appending it whole is many times cheaper than scalar by scalar.
        func special(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        let plain =
            value.utf8.withContiguousStorageIfAvailable { !$0.contains(where: special) }
            ?? !value.utf8.contains(where: special)
        if plain {
            text.writeString(value)
            text.writeInteger(UInt8(ascii: "\""))
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text.writeString("\\\"")
            case "\\": text.writeString("\\\\")
            case "\n": text.writeString("\\n")
            case "\r": text.writeString("\\r")
            case "\t": text.writeString("\\t")
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text.writeString("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                } else {
                    text.writeString(String(scalar))
                }
            }
        }
        text.writeInteger(UInt8(ascii: "\""))
    }
}
