import CLibPQ

extension PostgresConnection {
    /// Whether the session is outside any transaction, ready for a new statement (libpq's `PQTRANS_IDLE`): `false`
    /// inside a transaction, an aborted one included, and on a closed or broken connection.
    public var isIdle: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Puts an idle session back as a new connection leaves it, so that another job can use it: releases every
    /// session advisory lock, closes cursors, stops listening, resets every setting (then sets the session's own
    /// again, as a new connection does) and drops temporary tables, in one round trip. Like `DISCARD ALL`, except
    /// that prepared statements and cached plans are kept: they belong to the connection, not to the job.
    /// - Throws: `PostgresError` with code `.usage` inside a transaction (roll it back or close the connection);
    ///   what the server answers otherwise.
    public func resetSession() throws {
        guard isIdle else {
            throw PostgresError(
                code: .usage, operation: "reset", message: "the session is not idle (a transaction is open)")
        }
        try executeScript(
            "SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL; \(Self.sessionSettings); DISCARD TEMP")
    }
}
