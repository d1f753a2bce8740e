import Foundation

/// A payload Apple signs as a JWS. Its `signedDate` is the time the certificate chain is checked at, so a stored
/// payload still verifies after its certificates expire.
public protocol SignedPayloadContent: Decodable, Sendable {
    /// When the App Store signed the payload.
    var signedDate: Date? { get }
}
