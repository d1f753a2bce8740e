import Foundation

/// A signed payload that passed verification: the decoded model and the exact JSON bytes that were signed (for the
/// ledger's `jsonb` column).
public struct VerifiedPayload<Content: SignedPayloadContent>: Sendable {
    /// The decoded payload.
    public var payload: Content
    /// The payload's JSON exactly as signed.
    public var json: Data

    /// Wraps a verified payload.
    public init(payload: Content, json: Data) {
        self.payload = payload
        self.json = json
    }
}

/// A verified ``JWSTransactionDecodedPayload`` with its JSON.
public typealias VerifiedTransaction = VerifiedPayload<JWSTransactionDecodedPayload>
/// A verified ``JWSRenewalInfoDecodedPayload`` with its JSON.
public typealias VerifiedRenewalInfo = VerifiedPayload<JWSRenewalInfoDecodedPayload>
/// A verified ``ResponseBodyV2DecodedPayload`` with its JSON.
public typealias VerifiedNotification = VerifiedPayload<ResponseBodyV2DecodedPayload>
