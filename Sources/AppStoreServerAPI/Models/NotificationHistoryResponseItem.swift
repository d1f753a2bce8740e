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

    /// Decodes leniently, but an item without its payload fails as an item: the page leaves it out and counts it
    /// (`unreadable_items`), rather than keeping an item with nothing to verify or store.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let signed = c.lenientString(.signedPayload) else {
            throw DecodingError.dataCorruptedError(
                forKey: .signedPayload, in: c, debugDescription: "no signed payload in the history item")
        }
        signedPayload = signed
        sendAttempts = c.lenientNested(.sendAttempts) ?? []
    }
}
