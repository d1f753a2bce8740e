import Foundation

/// What a failed connect says: its kind (settings or a passing fault) and a message safe to log.
extension PostgresConnection {
    /// Why a connection attempt failed, from libpq's message: settings that cannot work (exit 78 for the CLI) or a
    /// server that could not be reached or let us in this time (exit 75).
    ///
    /// libpq gives no SQLSTATE for a failed connection, so the server's FATAL text is read (PostgreSQL's English
    /// messages, the default `lc_messages`). A failure libpq reports before reaching any server (an unknown option,
    /// a bad value) has no "connection to server" part: those are settings, as is anything not recognised.
    static func connectFailureCode(_ message: String, parsable: Bool) -> PostgresError.Code {
        guard parsable else { return .badSettings }
        let settings = [
            "does not exist",  // 3D000 database, 28000 role
            "authentication failed",  // 28P01 password, also peer/ident/cert failures
            "no pg_hba.conf entry",  // 28000
            "no password supplied", "password is required", "pg_hba.conf rejects connection",
            "invalid sslmode value", "invalid port number", "invalid integer value",
            // TLS: the server's certificate or the client's trust settings, not a passing fault.
            "certificate verify failed", "does not match host name", "server does not support SSL",
            "root certificate file", "certificate file", "SSL certificate",
        ]
        if settings.contains(where: { message.contains($0) }) { return .badSettings }
        let transient = [
            "connection to server", "could not connect to server", "could not translate host name", "timeout expired",
            "server closed the connection", "Connection refused", "the database system is",
            "too many clients", "remaining connection slots",
        ]
        if transient.contains(where: { message.contains($0) }) { return .connectionFailed }
        return .badSettings
    }

    /// `missing "=" after "PW-x9" in connection info string` → `missing "=" after "…" in connection info string`;
    /// a word the conninfo writes as a keyword (`invalid connection option "hostx"`) is kept.
    static func maskingQuotedWords(_ message: String, conninfo: String) -> String {
        let parts = message.split(separator: "\"", omittingEmptySubsequences: false)
        return parts.enumerated().map { index, part in
            guard index % 2 == 1, index < parts.count - 1, part != "=" else { return String(part) }
            let keyword = conninfo.contains(part + "=") || conninfo.contains(part + " =")
            return keyword ? String(part) : "…"
        }.joined(separator: "\"")
    }
}
