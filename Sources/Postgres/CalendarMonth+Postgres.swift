import StoreCalendar

/// A month travels as its `YYYY-MM` text (the `month` columns of `payout_report`).
extension CalendarMonth: PostgresEncodable, PostgresDecodable {
    public var postgresText: String? { description }

    public init?(postgresText: String) {
        guard let month = try? CalendarMonth(postgresText) else { return nil }
        self = month
    }
}
