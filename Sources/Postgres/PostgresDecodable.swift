import Foundation

/// A Swift type that can be read from a column in PostgreSQL's text format.
public protocol PostgresDecodable: Sendable {
    /// Reads the value from its text form.
    /// - Returns: `nil` when the text does not fit the type; the caller turns that into an error naming the column.
    init?(postgresText: String)
}

extension String: PostgresDecodable {
    public init?(postgresText: String) { self = postgresText }
}

extension Int: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int64: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int32: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Bool: PostgresDecodable {
    public init?(postgresText: String) {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension Double: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Decimal: PostgresDecodable {
    public init?(postgresText: String) {
        // Decimal(string:) accepts a leading number and ignores the rest; insist on the whole text.
        guard !postgresText.isEmpty,
            postgresText.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" || $0 == "e" || $0 == "E" }),
            let value = Decimal(string: postgresText, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        self = value
    }
}

extension Date: PostgresDecodable {
    public init?(postgresText: String) {
        guard let date = PostgresTimestamp.parse(postgresText) else { return nil }
        self = date
    }
}

extension PostgresJSON: PostgresDecodable {
    public init?(postgresText: String) { self.init(text: postgresText) }
}
