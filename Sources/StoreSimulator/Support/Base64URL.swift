/// Base64url without padding (RFC 7515 §2), as JWTs and JWSs use it.
///
/// Byte by byte over tables: every signed payload of Notification History is encoded here and every bearer token
/// decoded, and Foundation's base64 with `replacingOccurrences` goes through NSString on Linux.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each base64url character, 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        // Decoding has always taken plain base64's two characters as well.
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Encodes bytes.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        let count = input.count / 3 * 4 + [0, 2, 3][input.count % 3]
        return String(unsafeUninitializedCapacity: count) { output in
            input.withUnsafeBufferPointer { input in
                alphabet.withUnsafeBufferPointer { alphabet in
                    var written = 0
                    func put(_ sextet: UInt32) {
                        output[written] = alphabet[Int(sextet & 0x3F)]
                        written += 1
                    }
                    var index = 0
                    while index + 3 <= input.count {
                        let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                        put(word >> 18)
                        put(word >> 12)
                        put(word >> 6)
                        put(word)
                        index += 3
                    }
                    switch input.count - index {
                    case 1:
                        let word = UInt32(input[index]) << 16
                        put(word >> 18)
                        put(word >> 12)
                    case 2:
                        let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                        put(word >> 18)
                        put(word >> 12)
                        put(word >> 6)
                    default: break
                    }
                    return written
                }
            }
        }
    }

    /// Encodes the UTF-8 bytes of a string.
    static func encode(_ text: String) -> String {
        encode(Array(text.utf8))
    }

    /// Decodes text without padding (either alphabet); nil when it is not base64, or holds any `=`.
    static func decode(_ text: Substring) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in utf8 {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
