import Foundation

/// One attempt to deliver a notification.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/sendattemptitem)
public struct SendAttemptItem: Decodable, Sendable, Hashable {
    /// When Apple tried.
    public var attemptDate: Date?
    /// What came of it.
    public var sendAttemptResult: SendAttemptResult?

    enum CodingKeys: String, CodingKey {
        case attemptDate, sendAttemptResult
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        attemptDate = c.lenientDate(.attemptDate)
        sendAttemptResult = c.lenient(.sendAttemptResult)
    }
}
