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
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return nil }
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
