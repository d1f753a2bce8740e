import Foundation

/// Base64 for JWS: encodes base64url without padding; decodes either alphabet, with or without padding.
enum Base64URL {
    static func encode(_ bytes: some DataProtocol) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// Decodes `bytes`; `nil` when they are not base64: a character outside both alphabets, more than two `=` or
    /// one before the end, or a single character left over (6 bits cannot encode a byte).
    static func decode<Bytes: Collection>(_ bytes: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        // Every payload of every notification is decoded here: one pass over contiguous bytes, the table read
        // through one pointer rather than through its lazy global once per character.
        if let decoded = bytes.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(bytes).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    private static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var end = input.count
        while end > 0, input[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard input.count - end <= 2, end % 4 != 1 else { return nil }
        let length = end / 4 * 3 + max(0, end % 4 - 1)
        var valid = true
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: length) { output, written in
                var accumulator: UInt32 = 0
                var bits: UInt32 = 0
                for index in 0..<end {
                    let value = table[Int(input[index])]
                    guard value != 0xFF else {
                        valid = false
                        break
                    }
                    accumulator = (accumulator << 6) | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[written] = UInt8(truncatingIfNeeded: accumulator >> bits)
                        written += 1
                    }
                }
            }
        }
        return valid ? output : nil
    }

    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()
}
