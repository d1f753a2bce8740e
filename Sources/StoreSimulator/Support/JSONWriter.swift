/// Writes JSON text field by field, in the order the code says, with no model types in between: the simulator
/// writes its answers from the stores' documents, not through the clients' Codable models.
struct JSONWriter {
    /// The UTF-8 bytes written so far (appending bytes is several times cheaper than appending to a `String`: an
    /// Orders answer of 1000 orders is some 10,000 values).
    private var bytes: [UInt8] = []
    /// The JSON text written so far.
    var text: String { String(decoding: bytes, as: UTF8.self) }
    /// The UTF-8 bytes written so far, for a reply or a signature that takes bytes (no `String` in between).
    var utf8: [UInt8] { bytes }
    // One entry per open object or array: whether a value has been written at that level.
    private var started: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        if let last = started.last {
            if last { bytes.append(UInt8(ascii: ",")) }
            started[started.count - 1] = true
        }
    }

    mutating func beginObject() {
        beforeValue()
        bytes.append(UInt8(ascii: "{"))
        started.append(false)
    }

    mutating func endObject() {
        started.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        beforeValue()
        bytes.append(UInt8(ascii: "["))
        started.append(false)
    }

    mutating func endArray() {
        started.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func key(_ name: String) {
        beforeValue()
        Self.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ value: String) {
        beforeValue()
        Self.appendQuoted(value, to: &bytes)
    }

    mutating func int(_ value: Int64) {
        beforeValue()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func int(_ value: Int) {
        int(Int64(value))
    }

    mutating func bool(_ value: Bool) {
        beforeValue()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        beforeValue()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Inserts already-encoded JSON as one value.
    mutating func raw(_ json: String) {
        beforeValue()
        bytes.append(contentsOf: json.utf8)
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
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: value.utf8)
        bytes.append(UInt8(ascii: "\""))
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
