import Foundation

/// Finds and removes passwords in connection strings and in libpq's messages, which quote a conninfo or URI back
/// when they cannot parse it (`invalid IPv6 host address in URI: "postgresql://user:pw@[::1:bad/x"`).
///
/// Two shapes are recognised anywhere in a text: the password of a URI's userinfo (`scheme://user:PASSWORD@host`)
/// and a `password=` keyword or URI query parameter (`password=PASSWORD`, `password = 'quoted \' value'`,
/// `?password=PASSWORD&...`). The scan is lenient on purpose: it works on text libpq rejected.
public enum PostgresCredentials {
    /// What replaces a password.
    public static let mask = "***"

    /// `text` with every password in it replaced by ``mask``.
    public static func redact(_ text: String) -> String {
        let found = ranges(in: text)
        guard !found.isEmpty else { return text }
        var output = ""
        var position = text.startIndex
        for range in found {
            output += text[position..<range.lowerBound]
            output += mask
            position = range.upperBound
        }
        return output + text[position...]
    }

    /// The passwords written in `text` (a conninfo string or URI, well-formed or not), as written and
    /// percent-decoded, longest first.
    public static func passwords(in text: String) -> [String] {
        var values: Set<String> = []
        for range in ranges(in: text) where !range.isEmpty {
            let value = String(text[range])
            values.insert(value)
            if let decoded = value.removingPercentEncodingLeniently(), !decoded.isEmpty { values.insert(decoded) }
            if value.hasPrefix("'") || value.contains("\\") {
                let unquoted = value.trimmingCharacters(in: ["'"]).replacingOccurrences(of: "\\", with: "")
                if !unquoted.isEmpty { values.insert(unquoted) }
            }
        }
        return values.sorted { $0.count > $1.count }
    }

    /// Whether a URI's password (`scheme://user:PASSWORD@host`) holds a `/` or an `@` unencoded. libpq ends the user
    /// information at the first `@` or `/`: with a `/` in the password it reads `user:pass` as host and port, with an
    /// `@` it takes the password's rest for the host, and in both cases quotes pieces of the password back in its
    /// messages, where no scrubbing of the whole password finds them. (`?` and `#` it takes as they are.)
    public static func uriPasswordNeedsEncoding(_ text: String) -> Bool {
        guard let scheme = text.range(of: "://") else { return false }
        let rest = text[scheme.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" }
        guard let stop = rest.firstIndex(where: { $0 == "@" || $0 == "/" }) else { return false }
        let after = rest[rest.index(after: stop)...]
        let authority = after.prefix { $0 != "/" && $0 != "?" }
        if rest[stop] == "@" { return authority.contains("@") }
        // A `/` first: `user:word/...@host`, where `word` is no port, is a password holding a `/`.
        let head = rest[..<stop]
        guard let colon = head.firstIndex(of: ":") else { return false }
        let word = head[head.index(after: colon)...]
        guard word.isEmpty || !word.allSatisfy(\.isNumber) else { return false }
        return after.prefix { $0 != "?" }.contains("@")
    }

    /// The ranges of the password values in `text`, in order, not overlapping.
    static func ranges(in text: String) -> [Range<String.Index>] {
        var found: [Range<String.Index>] = []
        // URI userinfo: after "://", up to the last "@" before the end of the quoted or unquoted URI.
        var search = text.startIndex
        while let scheme = text.range(of: "://", range: search..<text.endIndex) {
            let start = scheme.upperBound
            var end = start
            while end < text.endIndex, !text[end].isWhitespace, text[end] != "\"" { end = text.index(after: end) }
            let segment = text[start..<end]
            if let at = segment.lastIndex(of: "@"), let colon = segment[..<at].firstIndex(of: ":") {
                found.append(text.index(after: colon)..<at)
            }
            search = end > start ? end : text.index(after: start)
            if search >= text.endIndex { break }
        }
        // password=value (a conninfo keyword or a URI query parameter), in any letter case.
        var index = text.startIndex
        while let key = text.range(of: "password", options: .caseInsensitive, range: index..<text.endIndex) {
            var cursor = key.upperBound
            index = key.upperBound
            while cursor < text.endIndex, text[cursor] == " " || text[cursor] == "\t" {
                cursor = text.index(after: cursor)
            }
            guard cursor < text.endIndex, text[cursor] == "=" else { continue }
            cursor = text.index(after: cursor)
            while cursor < text.endIndex, text[cursor] == " " || text[cursor] == "\t" {
                cursor = text.index(after: cursor)
            }
            let valueStart = cursor
            if cursor < text.endIndex, text[cursor] == "'" {
                cursor = text.index(after: cursor)
                while cursor < text.endIndex, text[cursor] != "'" {
                    if text[cursor] == "\\" { cursor = text.index(after: cursor) }
                    if cursor < text.endIndex { cursor = text.index(after: cursor) }
                }
                if cursor < text.endIndex { cursor = text.index(after: cursor) }
            } else {
                while cursor < text.endIndex, !text[cursor].isWhitespace, !"&\"".contains(text[cursor]) {
                    cursor = text.index(after: cursor)
                }
            }
            if cursor > valueStart { found.append(valueStart..<cursor) }
            index = cursor
        }
        return merge(found)
    }

    private static func merge(_ ranges: [Range<String.Index>]) -> [Range<String.Index>] {
        var merged: [Range<String.Index>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}

extension String {
    /// Percent-decodes what can be decoded, leaving malformed escapes as they are.
    func removingPercentEncodingLeniently() -> String? {
        guard contains("%") else { return nil }
        var bytes: [UInt8] = []
        let utf8 = Array(self.utf8)
        var index = 0
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: return byte - 48
            case 65...70: return byte - 55
            case 97...102: return byte - 87
            default: return nil
            }
        }
        while index < utf8.count {
            if utf8[index] == 37, index + 2 < utf8.count, let high = hex(utf8[index + 1]),
                let low = hex(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
