/// The three dot-separated parts of a compact JWS, as byte ranges of one buffer (nothing is copied or decoded yet).
struct CompactJWS {
    let bytes: [UInt8]
    private let firstDot: Int
    private let secondDot: Int

    /// Splits `text`.
    /// - Throws: ``AppStoreServerAPIError`` `malformedJWS` unless it has exactly three non-empty parts.
    init(_ text: String) throws {
        bytes = Array(text.utf8)
        var dots: [Int] = []
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2, dots[0] > 0, dots[1] > dots[0] + 1, dots[1] < bytes.count - 1 else {
            throw AppStoreServerAPIError(
                code: .malformedJWS, message: "not a compact JWS (expected three non-empty parts separated by dots)")
        }
        firstDot = dots[0]
        secondDot = dots[1]
    }

    var header: ArraySlice<UInt8> { bytes[..<firstDot] }
    var payload: ArraySlice<UInt8> { bytes[(firstDot + 1)..<secondDot] }
    var signature: ArraySlice<UInt8> { bytes[(secondDot + 1)...] }
    /// What the signature covers: `header.payload`.
    var signingInput: ArraySlice<UInt8> { bytes[..<secondDot] }
}
