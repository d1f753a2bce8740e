import Foundation
import RateLimiting

/// One App Store Server API call, before it is bound to a host: which rationed API, method, path, query and body.
struct APIRequest: Sendable {
    var api: StoreAPI
    var method: String
    /// Path segments after the host; each is percent-encoded when the URL is built.
    var pathSegments: [String]
    var query: [(name: String, value: String)] = []
    var body: Data?
    /// Whether Apple's 4040010 means "try the other environment" (transaction lookups only).
    var isTransactionLookup: Bool

    /// `METHOD /path`, for logs and errors (never the query, which may hold tokens).
    var label: String { "\(method) \(path)" }

    var path: String { "/" + pathSegments.map(Self.encode).joined(separator: "/") }

    /// The full URL on `base`.
    func url(base: URL) -> URL? {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.encode($0.name))=\(Self.encode($0.value))" }.joined(separator: "&")
        }
        return URL(string: text)
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes all but the unreserved characters. Every call's path and label pass here, and its segments
    /// (transaction IDs, `v2`, `notifications`) are nearly always unreserved already: those are returned as they are,
    /// without Foundation's `CharacterSet` walk.
    static func encode(_ text: String) -> String {
        let plain = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                return true
            default: return false
            }
        }
        return plain ? text : text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }
}
