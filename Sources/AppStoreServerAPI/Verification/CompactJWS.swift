import Foundation

/// The three dot-separated parts of a compact JWS, as byte ranges of one buffer (nothing is copied or decoded yet).
struct CompactJWS {
    let bytes: [UInt8]
    private let firstDot: Int
    private let secondDot: Int

    /// Splits `text`.
    /// - Throws: ``AppStoreServerAPIError`` `malformedJWS` unless it has exactly three non-empty parts.
    init(_ text: String) throws {
        bytes = Array(text.utf8)
        let (first, second, third) = bytes.withUnsafeBufferPointer { buffer in
            let next = { (from: Int) -> Int in
                guard let base = buffer.baseAddress, from < buffer.count,
                    let dot = memchr(base + from, Int32(UInt8(ascii: ".")), buffer.count - from)
                else { return buffer.count }
                return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(dot))
            }
            let first = next(0)
            let second = first < buffer.count ? next(first + 1) : buffer.count
            return (first, second, second < buffer.count ? next(second + 1) : buffer.count)
        }
        guard first > 0, second < bytes.count, second > first + 1, second < bytes.count - 1, third == bytes.count
        else {
            throw AppStoreServerAPIError(
                code: .malformedJWS, message: "not a compact JWS (expected three non-empty parts separated by dots)")
        }
        firstDot = first
        secondDot = second
    }

    var header: ArraySlice<UInt8> { bytes[..<firstDot] }
    var payload: ArraySlice<UInt8> { bytes[(firstDot + 1)..<secondDot] }
    var signature: ArraySlice<UInt8> { bytes[(secondDot + 1)...] }
    /// What the signature covers: `header.payload`.
    var signingInput: ArraySlice<UInt8> { bytes[..<secondDot] }
}

/// What a signed notification says about itself before it is verified.
public enum UnverifiedNotification {
    /// The `notificationUUID` its payload claims, read without checking the signature: a key to merge repeats by
    /// before verifying, or to name a payload that failed verification. Nil when the text is not a compact JWS or its
    /// payload has no such field.
    public static func uuid(_ signed: String) -> String? {
        struct UUIDOnly: Decodable { var notificationUUID: String? }
        guard let parts = try? CompactJWS(signed), let payload = Base64URL.decode(parts.payload) else { return nil }
        return (try? JSONDecoder().decode(UUIDOnly.self, from: Data(payload)))?.notificationUUID
    }
}
