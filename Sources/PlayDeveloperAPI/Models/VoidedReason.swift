/// Why a purchase was voided: `voidedReason` of a ``VoidedPurchase``.
///
/// Google has added reasons before, so an unknown number is kept in ``code`` and labelled `unknown`.
/// See [VoidedPurchase](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases#VoidedPurchase).
public struct VoidedReason: Sendable, Hashable, Codable, CustomStringConvertible, PlayEnumCode {
    static let labels = [
        "other", "remorse", "not_received", "defective", "accidental_purchase", "fraud", "friendly_fraud",
        "chargeback", "unacknowledged_purchase",
    ]

    /// The code Google sent (0 ... 8 today), or `nil` for an unrecognised text value.
    public var code: Int32?
    /// The label (`other`, `remorse`, `not_received`, `defective`, `accidental_purchase`, `fraud`,
    /// `friendly_fraud`, `chargeback`, `unacknowledged_purchase`), or `unknown`.
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

    /// 0: other.
    public static let other = Self(code: 0)
    /// 1: remorse.
    public static let remorse = Self(code: 1)
    /// 2: not received.
    public static let notReceived = Self(code: 2)
    /// 3: defective.
    public static let defective = Self(code: 3)
    /// 4: accidental purchase.
    public static let accidentalPurchase = Self(code: 4)
    /// 5: fraud.
    public static let fraud = Self(code: 5)
    /// 6: friendly fraud.
    public static let friendlyFraud = Self(code: 6)
    /// 7: chargeback.
    public static let chargeback = Self(code: 7)
    /// 8: unacknowledged purchase.
    public static let unacknowledgedPurchase = Self(code: 8)
}
