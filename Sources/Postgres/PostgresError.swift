/// An error from the PostgreSQL layer.
///
/// It names the operation that failed, the server's SQLSTATE and message where there is one, and the column
/// for decoding errors. It never holds query parameters or the connection password: `description` is safe
/// to log.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of failure this is.
    public enum Code: String, Sendable {
        /// Connecting failed for a reason that may pass: the server refused the connection, did not answer in time,
        /// is starting up or shutting down, or has too many clients.
        case connectionFailed
        /// The connection settings cannot work as written: libpq cannot parse the conninfo or URI, an option or
        /// its value is unknown or out of range (`hostx=`, `sslmode=bogus`, `port=99999999`), the database does not
        /// exist, or the server refused the credentials. Trying again changes nothing.
        case badSettings
        /// The connection was lost during an operation.
        case connectionLost
        /// The server rejected a statement.
        case server
        /// A value read from a row did not fit the requested Swift type.
        case decoding
        /// The caller used the API wrongly (for example a parameter with a NUL byte).
        case usage
    }

    /// What kind of failure this is.
    public var code: Code
    /// The operation that failed, such as `connect`, `query`, `copy` or `transaction`.
    public var operation: String
    /// The five-character SQLSTATE the server sent, when it sent one.
    public var sqlState: String?
    /// The server's (or libpq's) message, with every password removed (see ``PostgresCredentials``).
    public var message: String
    /// For decoding errors: the column that did not fit.
    public var column: String?

    /// Creates an error.
    public init(
        code: Code, operation: String, sqlState: String? = nil, message: String, column: String? = nil
    ) {
        self.code = code
        self.operation = operation
        self.sqlState = sqlState
        self.message = PostgresCredentials.redact(message)
        self.column = column
    }

    /// Whether the connection settings are wrong (``Code/badSettings``, or SQLSTATE 3D000 database missing, 28P01
    /// or 28000 authentication refused): an operator must change the configuration.
    public var isConfiguration: Bool {
        if code == .badSettings { return true }
        guard let sqlState else { return false }
        return ["3D000", "28P01", "28000"].contains(sqlState)
    }

    /// Whether the operation may succeed when tried again on a new connection (lost connection,
    /// serialization failure, deadlock, the server shutting down, a statement cancelled by a timeout).
    public var isRetryable: Bool {
        if isConfiguration { return false }
        if code == .connectionLost || code == .connectionFailed { return true }
        guard let sqlState else { return false }
        // 40001 serialization_failure, 40P01 deadlock_detected, 57P01..57P03 admin shutdown / cannot connect now,
        // 08xxx connection exceptions. 57014 query_canceled (statement_timeout, a cancel request) and 55P03
        // lock_not_available (lock_timeout) mostly mean a lock or a load spike that the next run will not meet; the
        // statement's transaction rolled back whole, so running again loses nothing.
        let transient = ["40001", "40P01", "57014", "55P03"]
        return transient.contains(sqlState) || sqlState.hasPrefix("57P") || sqlState.hasPrefix("08")
    }

    /// Whether a statement this connection had prepared could not run as prepared inside a transaction block (a table
    /// it reads changed its columns, or the session's prepared statements were dropped): the transaction was aborted,
    /// and running it again prepares the statement afresh.
    public var isStalePreparedStatement: Bool {
        ["0A000", "26000"].contains(sqlState ?? "") && message.contains(Self.preparedAfresh)
    }

    /// The words ``PostgresConnection`` adds to the server's message for a stale prepared statement.
    static let preparedAfresh = "the statement is prepared afresh on its next use"

    public var description: String {
        var text = "postgres \(operation) failed"
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        if let column { text += " (column \(column))" }
        let trimmed = message.trimmingWhitespace()
        if !trimmed.isEmpty { text += ": \(trimmed)" }
        return text
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
