import Foundation

/// An OAuth 2.0 access token for the Play Developer API. Its text never appears in ``description`` or dumps.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The bearer token; send only in an `Authorization` header.
    public let value: String
    /// When Google said it expires (`expires_in` after it was issued).
    public let expiresAt: Date

    /// Creates a token.
    public init(value: String, expiresAt: Date) {
        self.value = value
        self.expiresAt = expiresAt
    }

    public var description: String { "access token (redacted, expires \(expiresAt))" }

    /// Hides the token from `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["expiresAt": expiresAt]) }
}
