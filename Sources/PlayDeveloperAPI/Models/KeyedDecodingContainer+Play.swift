// Google sends int64 fields as JSON strings (proto3 JSON mapping) and some int32 enums as strings in its own
// examples; these helpers accept both spellings and fail with a coding path that names the field.
extension KeyedDecodingContainer {
    func decodeFlexibleInt64(forKey key: Key) throws -> Int64 {
        // Strings first: that is what Google sends, and a failed attempt costs a thrown error.
        if let text = try? decode(String.self, forKey: key) {
            guard let value = Int64(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: self,
                    debugDescription:
                        "expected an int64 (number or decimal string), got \(text.prefix(40).debugDescription)"
                )
            }
            return value
        }
        return try decode(Int64.self, forKey: key)
    }

    func decodeFlexibleInt64IfPresent(forKey key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeFlexibleInt64(forKey: key)
    }

    func decodeFlexibleInt32IfPresent(forKey key: Key) throws -> Int32? {
        guard let value = try decodeFlexibleInt64IfPresent(forKey: key) else { return nil }
        guard let narrow = Int32(exactly: value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\(value) is out of int32 range")
        }
        return narrow
    }

    /// Whether the key is present with a non-null value (Google's marker objects such as `testPurchase: {}`).
    func isPresent(_ key: Key) throws -> Bool {
        guard contains(key) else { return false }
        return try !decodeNil(forKey: key)
    }
}
