import Foundation

/// Asks a store about one subscription. Errors that should stop the whole job (quota, outages, credentials) are
/// thrown; everything about the one answer (not found, unusable) is a ``StatusReading``.
public protocol SubscriptionStatusSource: Sendable {
    /// One status call (two for Apple when the first environment does not know the transaction).
    func read(_ subscription: StoredSubscription, now: Date) async throws -> StatusReading
}
