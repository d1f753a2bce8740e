import Foundation

// Apple's payloads are decoded leniently: a missing field, a null, or a value of an unexpected type becomes nil
// instead of failing the whole payload (the verified raw JSON is kept beside the model, so nothing is lost).
// Numbers sent as strings and strings sent as numbers are accepted.
extension KeyedDecodingContainer {
    func lenientString(_ key: Key) -> String? {
        guard contains(key) else { return nil }
        if let value = try? decode(String.self, forKey: key) { return value }
        if let value = try? decode(Int64.self, forKey: key) { return String(value) }
        return nil
    }

    func lenientInt64(_ key: Key) -> Int64? {
        guard contains(key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) { return value }
        if let value = try? decode(Double.self, forKey: key) { return Self.rounded(value) }
        if let text = try? decode(String.self, forKey: key) {
            if let value = Int64(text) { return value }
            if let value = Double(text) { return Self.rounded(value) }
        }
        return nil
    }

    func lenientInt(_ key: Key) -> Int? {
        lenientInt64(key).flatMap { Int(exactly: $0) }
    }

    func lenientBool(_ key: Key) -> Bool? {
        guard contains(key) else { return nil }
        if let value = try? decode(Bool.self, forKey: key) { return value }
        if let value = try? decode(Int64.self, forKey: key) { return value != 0 }
        if let text = try? decode(String.self, forKey: key) {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: return nil
            }
        }
        return nil
    }

    /// A time in milliseconds since 1970; Xcode-signed payloads carry fractions of a millisecond, rounded here.
    func lenientDate(_ key: Key) -> Date? {
        lenientInt64(key).map(Date.init(millisecondsSince1970:))
    }

    /// A UUID; absent, empty or malformed gives nil.
    func lenientUUID(_ key: Key) -> UUID? {
        lenientString(key).flatMap { UUID(uuidString: $0) }
    }

    /// A page's list (of signed payloads, notifications, subscription groups) and how many of its items could not be
    /// read (a null, a number where a JWS belongs, an item without its payload): those are left out and counted, the
    /// others kept. Absent or null is empty; a value that is no list fails the page (read as empty, it would let the
    /// cursor move past what the page held).
    func pageList<Element: Decodable>(_ key: Key, of type: Element.Type = Element.self) throws -> (
        items: [Element], unreadable: Int
    ) {
        guard contains(key), try !decodeNil(forKey: key) else { return ([], 0) }
        let items = try decode([PageItem<Element>].self, forKey: key)
        return (items.compactMap(\.value), items.count { $0.value == nil })
    }

    /// A page's `hasMore`: absent or null is `false`; a value that is no boolean fails the page rather than ending
    /// the paging early.
    func pageFlag(_ key: Key) throws -> Bool {
        guard contains(key), try !decodeNil(forKey: key) else { return false }
        guard let value = lenientBool(key) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "expected a boolean")
        }
        return value
    }

    func lenientStrings(_ key: Key) -> [String]? {
        guard contains(key) else { return nil }
        return try? decode([String].self, forKey: key)
    }

    func lenient<Value: StoreStringValue>(_ key: Key, as type: Value.Type = Value.self) -> Value? {
        lenientString(key).map(Value.init(rawValue:))
    }

    func lenient<Value: StoreIntValue>(_ key: Key, as type: Value.Type = Value.self) -> Value? {
        lenientInt(key).map(Value.init(rawValue:))
    }

    /// A nested object; one that does not decode gives nil.
    func lenientNested<Value: Decodable>(_ key: Key, as type: Value.Type = Value.self) -> Value? {
        guard contains(key) else { return nil }
        return (try? decodeIfPresent(Value.self, forKey: key)) ?? nil
    }

    private static func rounded(_ value: Double) -> Int64? {
        guard value.isFinite, abs(value) < 9.0e18 else { return nil }
        return Int64(value.rounded())
    }
}

extension Date {
    /// A date from milliseconds since 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Milliseconds since 1970, rounded to the nearest millisecond.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }
}

/// One item of a page's list: the element, or nil when it cannot be read.
struct PageItem<Element: Decodable>: Decodable {
    var value: Element?

    init(from decoder: any Decoder) throws {
        value = try? Element(from: decoder)
    }
}
