/// `subscriptionState` of a ``SubscriptionPurchaseV2``; values this client does not know are kept as sent.
///
/// See [SubscriptionState](https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.subscriptionsv2#SubscriptionState).
public struct SubscriptionState: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The value as Google sent it, e.g. `SUBSCRIPTION_STATE_ACTIVE`.
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
    public static let unspecified = Self(rawValue: "SUBSCRIPTION_STATE_UNSPECIFIED")
    /// Created, awaiting payment during sign-up.
    public static let pending = Self(rawValue: "SUBSCRIPTION_STATE_PENDING")
    /// Active.
    public static let active = Self(rawValue: "SUBSCRIPTION_STATE_ACTIVE")
    /// Paused (auto-renewing plans only).
    public static let paused = Self(rawValue: "SUBSCRIPTION_STATE_PAUSED")
    /// In grace period: a renewal charge failed, access continues.
    public static let inGracePeriod = Self(rawValue: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD")
    /// On hold (suspended): no access.
    public static let onHold = Self(rawValue: "SUBSCRIPTION_STATE_ON_HOLD")
    /// Canceled but not yet expired: access until `expiryTime`.
    public static let canceled = Self(rawValue: "SUBSCRIPTION_STATE_CANCELED")
    /// Expired.
    public static let expired = Self(rawValue: "SUBSCRIPTION_STATE_EXPIRED")
    /// A pending purchase was canceled.
    public static let pendingPurchaseCanceled = Self(rawValue: "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED")

    /// Every state the discovery document lists.
    public static let known: Set<Self> = [
        .unspecified, .pending, .active, .paused, .inGracePeriod, .onHold, .canceled, .expired,
        .pendingPurchaseCanceled,
    ]

    /// Whether the discovery document lists this state.
    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { rawValue }
}
