/// Writes JSON text field by field, in the order the code says, with no model types in between: the simulator
/// writes its answers from the stores' documents, not through the clients' Codable models.
struct JSONWriter {
    private(set) var text = ""
    // One entry per open object or array: whether a value has been written at that level.
    private var started: [Bool] = []
    private var afterKey = false

    init(capacity: Int = 256) {
        text.reserveCapacity(capacity)
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        if let last = started.last {
            if last { text.append(",") }
            started[started.count - 1] = true
        }
    }

    mutating func beginObject() {
        beforeValue()
        text.append("{")
        started.append(false)
    }

    mutating func endObject() {
        started.removeLast()
        text.append("}")
    }

    mutating func beginArray() {
        beforeValue()
        text.append("[")
        started.append(false)
    }

    mutating func endArray() {
        started.removeLast()
        text.append("]")
    }

    mutating func key(_ name: String) {
        beforeValue()
        Self.appendQuoted(name, to: &text)
        text.append(":")
        afterKey = true
    }

    mutating func string(_ value: String) {
        beforeValue()
        Self.appendQuoted(value, to: &text)
    }

    mutating func int(_ value: Int64) {
        beforeValue()
        text.append(String(value))
    }

    mutating func int(_ value: Int) {
        int(Int64(value))
    }

    mutating func bool(_ value: Bool) {
        beforeValue()
        text.append(value ? "true" : "false")
    }

    mutating func null() {
        beforeValue()
        text.append("null")
    }

    /// Inserts already-encoded JSON as one value.
    mutating func raw(_ json: String) {
        beforeValue()
        text.append(json)
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

    private static func appendQuoted(_ value: String, to text: inout String) {
        text.append("\"")
        // Almost every value needs no escaping; appending it whole is many times cheaper than scalar by scalar.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text.append(value)
            text.append("\"")
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text.append("\\\"")
            case "\\": text.append("\\\\")
            case "\n": text.append("\\n")
            case "\r": text.append("\\r")
            case "\t": text.append("\\t")
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text.append("\"")
    }
}
