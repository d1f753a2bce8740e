/// One notification of the history, with Apple's attempts to deliver it.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryresponseitem)
public struct NotificationHistoryResponseItem: Decodable, Sendable, Hashable {
    /// A JWS holding a ``ResponseBodyV2DecodedPayload``.
    public var signedPayload: String?
    /// The delivery attempts; empty when absent.
    public var sendAttempts: [SendAttemptItem]

    enum CodingKeys: String, CodingKey {
        case signedPayload, sendAttempts
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        signedPayload = c.lenientString(.signedPayload)
        sendAttempts = c.lenientNested(.sendAttempts) ?? []
    }
}
