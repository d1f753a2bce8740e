import Foundation

/// An App Store Server Notification V2, decoded from its verified `signedPayload` (also what Get Notification History
/// returns in each item). Decoding is lenient.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload)
public struct ResponseBodyV2DecodedPayload: Decodable, Sendable, Hashable, SignedPayloadContent {
    /// What happened (`REFUND`, `REFUND_REVERSED`, `REVOKE`, `DID_RENEW`, ...).
    public var notificationType: NotificationTypeV2?
    /// More detail on ``notificationType``.
    public var subtype: Subtype?
    /// The notification's unique identifier (the same on every retry of it).
    public var notificationUUID: String?
    /// The app, environment and signed transaction and renewal info the notification is about.
    public var data: NotificationData?
    /// For summary notifications (a renewal-date extension for many customers), in place of ``data``.
    public var summary: NotificationSummary?
    /// The notification format version ("2.0").
    public var version: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?

    enum CodingKeys: String, CodingKey {
        case notificationType, subtype, notificationUUID, data, summary, version, signedDate
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = c.lenient(.notificationType)
        subtype = c.lenient(.subtype)
        notificationUUID = c.lenientString(.notificationUUID)
        data = c.lenientNested(.data)
        summary = c.lenientNested(.summary)
        version = c.lenientString(.version)
        signedDate = c.lenientDate(.signedDate)
    }
}
