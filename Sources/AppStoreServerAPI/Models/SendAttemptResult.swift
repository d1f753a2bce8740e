/// The outcome of one attempt to send a notification to the app's server. Unknown values are kept.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/sendattemptresult)
public struct SendAttemptResult: StoreStringValue {
    /// The value as Apple sends it.
    public var rawValue: String

    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `SUCCESS`.
    public static let success = SendAttemptResult(rawValue: "SUCCESS")
    /// `TIMED_OUT`.
    public static let timedOut = SendAttemptResult(rawValue: "TIMED_OUT")
    /// `TLS_ISSUE`.
    public static let tlsIssue = SendAttemptResult(rawValue: "TLS_ISSUE")
    /// `CIRCULAR_REDIRECT`.
    public static let circularRedirect = SendAttemptResult(rawValue: "CIRCULAR_REDIRECT")
    /// `NO_RESPONSE`.
    public static let noResponse = SendAttemptResult(rawValue: "NO_RESPONSE")
    /// `SOCKET_ISSUE`.
    public static let socketIssue = SendAttemptResult(rawValue: "SOCKET_ISSUE")
    /// `UNSUPPORTED_CHARSET`.
    public static let unsupportedCharset = SendAttemptResult(rawValue: "UNSUPPORTED_CHARSET")
    /// `INVALID_RESPONSE`.
    public static let invalidResponse = SendAttemptResult(rawValue: "INVALID_RESPONSE")
    /// `PREMATURE_CLOSE`.
    public static let prematureClose = SendAttemptResult(rawValue: "PREMATURE_CLOSE")
    /// `UNSUCCESSFUL_HTTP_RESPONSE_CODE`.
    public static let unsuccessfulHTTPResponseCode = SendAttemptResult(rawValue: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
    /// `OTHER`.
    public static let other = SendAttemptResult(rawValue: "OTHER")
}
