/// The body of an App Store Server API error: `{"errorCode": N, "errorMessage": "..."}`.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/error_codes)
public struct ErrorPayload: Decodable, Sendable, Hashable {
    /// Apple's error code; unknown codes are kept.
    public var errorCode: APIErrorCode?
    /// Apple's description.
    public var errorMessage: String?

    enum CodingKeys: String, CodingKey {
        case errorCode, errorMessage
    }

    /// Decodes leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        errorCode = c.lenientInt64(.errorCode).map(APIErrorCode.init(rawValue:))
        errorMessage = c.lenientString(.errorMessage)
    }
}
