import Hummingbird

/// Writes JSON text field by field, in the order the code says, with no model types in between: the simulator
/// writes its answers from the stores' documents, not through the clients' Codable models.
struct JSONWriter {
    /// The UTF-8 bytes written so far. An array, not the reply's `ByteBuffer`: its appends of a byte or a run of
    /// bytes are as cheap in an optimized build, and in a debug build (the test suite's) many times cheaper than
    /// `ByteBuffer`'s generic integer writes, which took two thirds of a test's CPU writing Orders answers.
    private(set) var utf8: [UInt8]
    /// The bytes written so far in the buffer a reply goes to the wire in (one copy, at the end).
    var buffer: ByteBuffer { ByteBuffer(bytes: utf8) }
    /// The JSON text written so far.
    var text: String { String(decoding: utf8, as: UTF8.self) }
    // One entry per open object or array: whether a value has been written at that level.
    private var started: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 256) {
        utf8 = []
        utf8.reserveCapacity(capacity)
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        if let last = started.last {
            if last { utf8.append(UInt8(ascii: ",")) }
            started[started.count - 1] = true
        }
    }

    mutating func beginObject() {
        beforeValue()
        utf8.append(UInt8(ascii: "{"))
        started.append(false)
    }

    mutating func endObject() {
        started.removeLast()
        utf8.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        beforeValue()
        utf8.append(UInt8(ascii: "["))
        started.append(false)
    }

    mutating func endArray() {
        started.removeLast()
        utf8.append(UInt8(ascii: "]"))
    }

    mutating func key(_ name: String) {
        beforeValue()
        Self.appendQuoted(name, to: &utf8)
        utf8.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ value: String) {
        beforeValue()
        Self.appendQuoted(value, to: &utf8)
    }

    mutating func int(_ value: Int64) {
        beforeValue()
        utf8.append(contentsOf: String(value).utf8)
    }

    mutating func int(_ value: Int) {
        int(Int64(value))
    }

    mutating func bool(_ value: Bool) {
        beforeValue()
        utf8.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        beforeValue()
        utf8.append(contentsOf: "null".utf8)
    }

    /// Inserts already-encoded JSON as one value.
    mutating func raw(_ json: String) {
        beforeValue()
        utf8.append(contentsOf: json.utf8)
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

    /// Writes a compact JWS (base64url parts and dots: ``JWSSigner``'s output, whose parts ``Base64URL`` encodes) as
    /// a string without looking for characters to escape: there are none, and a signed notification is kilobytes
    /// long. (Not even checked in debug builds: the check was a twelfth of the Apple job tests' CPU.)
    mutating func field(_ name: String, jws value: String) {
        key(name)
        beforeValue()
        utf8.append(UInt8(ascii: "\""))
        utf8.append(contentsOf: value.utf8)
        utf8.append(UInt8(ascii: "\""))
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

    private static func appendQuoted(_ value: String, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "\""))
        // Almost every value needs no escaping; appending it whole is many times cheaper than scalar by scalar.
        func special(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        let plain =
            value.utf8.withContiguousStorageIfAvailable { !$0.contains(where: special) }
            ?? !value.utf8.contains(where: special)
        if plain {
            text.append(contentsOf: value.utf8)
            text.append(UInt8(ascii: "\""))
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text.append(contentsOf: "\\\"".utf8)
            case "\\": text.append(contentsOf: "\\\\".utf8)
            case "\n": text.append(contentsOf: "\\n".utf8)
            case "\r": text.append(contentsOf: "\\r".utf8)
            case "\t": text.append(contentsOf: "\\t".utf8)
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
                } else {
                    text.append(contentsOf: String(scalar).utf8)
                }
            }
        }
        text.append(UInt8(ascii: "\""))
    }
}
