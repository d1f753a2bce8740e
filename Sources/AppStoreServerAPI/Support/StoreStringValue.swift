/// A string value from one of Apple's enumerations that keeps any value, known or not: an unknown value never fails
/// decoding, and the raw value is always there to store or log.
public protocol StoreStringValue: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue == String {
    /// Wraps any raw value.
    init(rawValue: String)
}

extension StoreStringValue {
    /// Decodes any string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the raw value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The raw value.
    public var description: String { rawValue }
}

/// An integer value from one of Apple's enumerations that keeps any value, known or not.
public protocol StoreIntValue: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue == Int {
    /// Wraps any raw value.
    init(rawValue: Int)
}

extension StoreIntValue {
    /// Decodes an integer, or a string holding one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) {
            self.init(rawValue: value)
        } else if let text = try? container.decode(String.self), let value = Int(text) {
            self.init(rawValue: value)
        } else {
            throw DecodingError.typeMismatch(
                Int.self, .init(codingPath: decoder.codingPath, debugDescription: "not an integer"))
        }
    }

    /// Encodes the raw value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The raw value.
    public var description: String { String(rawValue) }
}
