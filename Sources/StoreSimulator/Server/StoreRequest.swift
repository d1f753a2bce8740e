import Foundation

/// An HTTP request as the endpoint handlers see it, free of the server library.
struct StoreRequest: Sendable {
    var method: String
    /// Percent-decoded path segments.
    var segments: [String]
    /// Query parameters in order, percent-decoded (`+` stays `+`).
    var query: [(name: String, value: String)]
    var authorization: String?
    var body: Data

    /// The first value of a query parameter.
    func parameter(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Every value of a repeated query parameter.
    func parameters(_ name: String) -> [String] {
        query.filter { $0.name == name }.map(\.value)
    }

    /// The bearer token of the `Authorization` header.
    var bearerToken: String? {
        guard let authorization else { return nil }
        let scheme = authorization.utf8.prefix(7)
        // ASCII letters compared with their case bit cleared: Foundation's `lowercased` and trimming are costly per
        // call, so they run only when an end of the token is not plain ASCII.
        guard scheme.count == 7, zip(scheme, "BEARER ".utf8).allSatisfy({ $0 & 0xDF == $1 & 0xDF }) else {
            return nil
        }
        let token = authorization.utf8.dropFirst(7)
        let plain = { (byte: UInt8) in byte > 0x20 && byte < 0x80 }
        if let first = token.first, let last = token.last, plain(first), plain(last) {
            return String(Substring(token))
        }
        return String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    /// Splits a query string (`a=1&b=2`) into decoded pairs.
    /// - Parameter plusIsSpace: true for form bodies (`application/x-www-form-urlencoded`).
    static func parseQuery(_ text: String?, plusIsSpace: Bool = false) -> [(name: String, value: String)] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                // Most parts have neither: Foundation's replace and percent-decoding cost a fifth of the simulator's
                // time on a batch of 1000 order ids.
                guard part.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
                    return String(part)
                }
                let text = plusIsSpace ? part.replacingOccurrences(of: "+", with: " ") : String(part)
                return text.removingPercentEncoding ?? text
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
