/// `acknowledgementState` of a ``SubscriptionPurchaseV2``; unknown values are kept as sent.
///
/// See [AcknowledgementState](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#AcknowledgementState).
public struct AcknowledgementState: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The value as Google sent it.
    public var rawValue: String

    /// Creates a state from Google's value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Decodes the string as sent.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the string as sent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Unspecified.
    public static let unspecified = Self(rawValue: "ACKNOWLEDGEMENT_STATE_UNSPECIFIED")
    /// Not acknowledged yet.
    public static let pending = Self(rawValue: "ACKNOWLEDGEMENT_STATE_PENDING")
    /// Acknowledged.
    public static let acknowledged = Self(rawValue: "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED")

    public var description: String { rawValue }
}
