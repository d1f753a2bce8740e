import StoreCalendar

/// What `status` says of an app's tie-out: the newest month with a financial report loaded, and how its lines came
/// out (`storerecon report tie-out --month` lists them).
public struct TieOutStatus: Codable, Sendable, Equatable {
    /// The month (`YYYY-MM` in JSON).
    public var month: CalendarMonth
    /// Lines compared (Google orders, Apple product x country x currency).
    public var lines: Int
    /// Lines not matched.
    public var differing: Int
    /// Lines not matched that name no cause: the ones to look into.
    public var withoutCause: Int

    /// Creates the status.
    public init(month: CalendarMonth, lines: Int, differing: Int, withoutCause: Int) {
        self.month = month
        self.lines = lines
        self.differing = differing
        self.withoutCause = withoutCause
    }
}
