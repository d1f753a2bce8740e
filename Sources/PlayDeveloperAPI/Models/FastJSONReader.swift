import Foundation

/// A cursor over JSON bytes for the fast decoders (`VoidedPageFastDecoder`, `OrdersFastDecoder`): one pass, no
/// intermediate values. Every reader returns `nil` (or `false`) for anything it is not sure of, and the decoder then
/// gives up so the caller decodes with JSONDecoder: values and errors stay exactly JSONDecoder's.
struct FastJSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Whether only whitespace is left.
    mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    /// An object whose members `member` reads (it returns false to give up).
    mutating func object(_ member: (String, inout FastJSONReader) -> Bool) -> Bool {
        skipWhitespace()
        guard consume(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard let key = string() else { return false }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard member(key, &self) else { return false }
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "}"))
        }
    }

    /// An array whose elements `element` reads (it returns false to give up).
    mutating func array(_ element: (inout FastJSONReader) -> Bool) -> Bool {
        skipWhitespace()
        guard consume(UInt8(ascii: "[")) else { return false }
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return true }
        while true {
            skipWhitespace()
            guard element(&self) else { return false }
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "]"))
        }
    }

    /// A string without escapes or control characters, as valid UTF-8.
    mutating func string() -> String? {
        guard let (start, end, ascii) = plainString(escapes: false) else { return nil }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
        return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
    }

    /// The bounds of a string without control characters (and without escapes unless `escapes`, which accepts JSON's
    /// escapes without decoding them), and whether it is ASCII; `index` moves past it.
    private mutating func plainString(escapes: Bool) -> (Int, Int, Bool)? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        var high: UInt8 = 0
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                guard escapes, let after = escapeEnd(at: end) else { return nil }
                end = after
                continue
            }
            high |= byte
            end += 1
        }
        guard end < bytes.count else { return nil }
        index = end + 1
        return (start, end, high < 0x80)
    }

    /// Where the escape starting at the backslash at `at` ends, or `nil` when it is not one of JSON's.
    private func escapeEnd(at: Int) -> Int? {
        guard at + 1 < bytes.count else { return nil }
        switch bytes[at + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return at + 2
        case UInt8(ascii: "u"):
            guard at + 6 <= bytes.count else { return nil }
            for hex in bytes[(at + 2)..<(at + 6)] {
                guard (0x30...0x39).contains(hex) || (0x61...0x66).contains(hex | 0x20) else { return nil }
            }
            return at + 6
        default:
            return nil
        }
    }

    /// An unquoted JSON integer (`-`? digits, no leading zero), followed by a delimiter.
    mutating func integer() -> Int64? {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digits = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
        let count = index - digits
        guard count > 0, count == 1 || bytes[digits] != UInt8(ascii: "0"), atDelimiter() else { return nil }
        return Int64(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    /// An int64 sent as a decimal string (Google's way) or a number, read as `decodeFlexibleInt64` reads it.
    mutating func flexibleInteger() -> Int64? {
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") { return string().flatMap { Int64($0) } }
        return integer()
    }

    /// Skips a value of any kind that the decoder does not read (JSONDecoder ignores unknown keys), checking it as
    /// strictly as JSONDecoder would: strings with JSON's escapes and no control characters, as valid UTF-8; numbers
    /// by JSON's grammar; the three literals; objects and arrays of those.
    mutating func skipValue(depth: Int = 0) -> Bool {
        skipWhitespace()
        guard index < bytes.count, depth < 64 else { return false }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            guard let (start, end, ascii) = plainString(escapes: true) else { return false }
            return ascii || String(validating: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) != nil
        case UInt8(ascii: "{"):
            return object { _, reader in reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            return array { reader in reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "t"):
            return literal("true")
        case UInt8(ascii: "f"):
            return literal("false")
        case UInt8(ascii: "n"):
            return literal("null")
        default:
            return number()
        }
    }

    /// A JSON number (`-`? int frac? exp?), followed by a delimiter.
    private mutating func number() -> Bool {
        _ = consume(UInt8(ascii: "-"))
        let first = index
        let count = digits()
        guard count == 1 || (count > 1 && bytes[first] != UInt8(ascii: "0")) else { return false }
        if consume(UInt8(ascii: ".")) { guard digits() > 0 else { return false } }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard digits() > 0 else { return false }
        }
        return atDelimiter()
    }

    /// Consumes a run of digits; how many.
    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
        return index - start
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return atDelimiter()
    }

    /// Whether the next byte ends a scalar (or the text ends).
    private func atDelimiter() -> Bool {
        guard index < bytes.count else { return true }
        switch bytes[index] {
        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\n"),
            UInt8(ascii: "\r"), UInt8(ascii: "\t"):
            return true
        default:
            return false
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
