import Foundation

/// Builds API URLs: every path segment and query value is percent-encoded, keeping only RFC 3986 unreserved
/// characters, so a token holding `/`, `+`, `=` or `%` can never change the path or the query.
enum PlayURL {
    static func percentEncode(_ text: String) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true)
                    + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    /// `base` + `/` + the encoded segments + the encoded query, or `nil` if the result is not a URL.
    static func make(base: URL, segments: [String], query: [(String, String)] = []) -> URL? {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        for segment in segments { text += "/" + percentEncode(segment) }
        if !query.isEmpty {
            text += "?" + query.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
        }
        return URL(string: text)
    }

    /// A path for logs and errors: a token segment is cut to its first 8 characters.
    static func label(method: String, segments: [String], tokenIndex: Int? = nil) -> String {
        let shown = segments.enumerated().map { index, segment in
            index == tokenIndex && segment.count > 8 ? String(segment.prefix(8)) + "…" : segment
        }
        return method + " /" + shown.joined(separator: "/")
    }
}
