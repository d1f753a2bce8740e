import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs and JWSs use it.
enum Base64URL {
    /// Encodes bytes.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Byte by byte: `replacingOccurrences` goes through NSString on Linux, and every signed payload of
        // Notification History passes here three times (the simulator's largest CPU share in the refund requests
        // bench).
        let base64 = Data(bytes).base64EncodedData()
        var text: [UInt8] = []
        text.reserveCapacity(base64.count)
        for byte in base64 {
            switch byte {
            case UInt8(ascii: "+"): text.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): text.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: text.append(byte)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Encodes the UTF-8 bytes of a string.
    static func encode(_ text: String) -> String {
        encode(Array(text.utf8))
    }

    /// Decodes, accepting missing padding; nil when the text is not base64url.
    static func decode(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}
