import Foundation

/// Decodes base64url (RFC 4648 §5), padding added, to read a JWT the client sent.
enum Base64URLTestDecoder {
    static func decode(_ text: String) -> Data? {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
