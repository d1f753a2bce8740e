/// Who voided a purchase: `voidedSource` of a ``VoidedPurchase``.
///
/// See [VoidedPurchase](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases#VoidedPurchase).
public struct VoidedSource: Sendable, Hashable, Codable, CustomStringConvertible, PlayEnumCode {
    static let labels = ["user", "developer", "google"]

    /// The code Google sent (0 user, 1 developer, 2 Google), or `nil` for an unrecognised text value.
    public var code: Int32?
    /// `user`, `developer`, `google`, or `unknown` for a code this client does not know.
    public var label: String

    /// Creates a value; prefer ``init(code:)``, which labels the code.
    public init(code: Int32?, label: String) {
        self.code = code
        self.label = label
    }

    /// Creates the value for a code, labelled `unknown` when this client does not know it.
    public init(code: Int32) { self.init(code: code, label: Self.label(for: code)) }

    /// Decodes a number, a decimal string, or a label.
    public init(from decoder: any Decoder) throws { try self.init(decoding: decoder) }

    /// Encodes the number (or the label, when no number was sent).
    public func encode(to encoder: any Encoder) throws { try encodeCode(to: encoder) }

    /// Whether this client knows the code.
    public var isKnown: Bool { label != "unknown" }

    public var description: String { codeDescription }

    /// The user voided the purchase.
    public static let user = Self(code: 0)
    /// The developer voided the purchase.
    public static let developer = Self(code: 1)
    /// Google voided the purchase.
    public static let google = Self(code: 2)
}
