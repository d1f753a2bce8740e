/// An error of the Payouts module: a report file that cannot be read, or a store answer that cannot be used.
///
/// Its `description` is one line naming what was wrong (file, line and column; or app and request) and never holds
/// a token or a key.
public struct PayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: String, Sendable {
        /// A report file is damaged or not in the store's format (exit 1).
        case badFile
        /// A key, key file or configured value is wrong, or the store refused the credentials (exit 78).
        case configuration
        /// The store failed or throttled; running again later may succeed (exit 75).
        case unavailable
        /// The store answered something that cannot be used (exit 1).
        case badAnswer
    }

    /// What kind of failure.
    public var code: Code
    /// One line for the operator.
    public var message: String
    /// The file (or object) the error is in, when it is about a file.
    public var file: String?
    /// 1-based line of the file, when known.
    public var line: Int?
    /// 1-based column (field) of the line, when known.
    public var column: Int?
    /// The HTTP status the store answered, when it did.
    public var httpStatus: Int?
    /// The store's `Retry-After`, in seconds from now, when it sent one.
    public var retryAfter: Double?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil,
        httpStatus: Int? = nil, retryAfter: Double? = nil
    ) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }

    /// Whether running again later may succeed.
    public var isRetryable: Bool { code == .unavailable }

    /// `file:line:column: message`, with the parts that are known.
    public var description: String {
        var place = file ?? ""
        if let line { place += (place.isEmpty ? "" : ":") + "line \(line)" }
        if let column { place += ", column \(column)" }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
