import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs and JWSs use it.
enum Base64URL {
    /// Encodes bytes.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
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
