/// The answer to one attempt at a call: granted, or how long to wait before asking again.
public struct QuotaAttempt: Sendable, Hashable {
    /// The grant, or `nil` when the limits do not allow a call yet.
    public var grant: QuotaGrant?
    /// When not granted: how long until the limits allow the next call (`.zero` when granted).
    public var wait: Duration

    /// Creates an answer.
    public init(grant: QuotaGrant?, wait: Duration) {
        self.grant = grant
        self.wait = wait
    }
}
