import Foundation

/// A call the shared limiter granted.
public struct QuotaGrant: Sendable, Hashable {
    /// When it was granted, by the database server's clock (the one clock every host shares).
    public var grantedAt: Date
    /// The US-Pacific day it was counted in.
    public var day: PacificDay
    /// Calls of this (app, API) granted that day, this one included.
    public var usedToday: Int
    /// Of those, calls granted to backfills.
    public var usedBackfillToday: Int

    /// Creates a grant.
    public init(grantedAt: Date, day: PacificDay, usedToday: Int, usedBackfillToday: Int) {
        self.grantedAt = grantedAt
        self.day = day
        self.usedToday = usedToday
        self.usedBackfillToday = usedBackfillToday
    }
}
