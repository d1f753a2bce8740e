import CLibPQ
import Foundation

/// One connection to PostgreSQL through libpq.
///
/// Accepts anything `psql` accepts: a conninfo string (`host=/tmp dbname=x`), a URI (`postgresql:///x`), multiple
/// hosts with `target_session_attrs`, and libpq's `PG*` variables, `.pgpass` and service files. Calls block the
/// calling thread, so async code makes them inside ``DatabaseThreads/run(isolation:_:)``, never on Swift's shared
/// pool; a connection belongs to one task at a time (it is not `Sendable`).
///
/// Every session is set to `TimeZone=UTC` so timestamps read back in one format.
public final class PostgresConnection {
    var handle: OpaquePointer?
    /// The statements this session has prepared (``PreparedStatementCache``).
    var statements: PreparedStatementCache
    /// The passwords found in the conninfo, if any, kept only to scrub them from libpq's messages.
    private let secrets: [String]

    /// Connects.
    /// - Parameter conninfo: a libpq conninfo string or URI. An empty string uses libpq's defaults (`PG*` variables).
    /// - Throws: `PostgresError` with code `.badSettings` when the settings cannot work (unparsable, unknown option
    ///   or value, database missing, credentials refused) and `.connectionFailed` otherwise; its message never
    ///   contains the password.
    public init(conninfo: String) throws {
        guard !PostgresCredentials.uriPasswordNeedsEncoding(conninfo) else {
            throw PostgresError(
                code: .badSettings, operation: "connect",
                message:
                    "the URI's password holds '/' or '@' unencoded, which libpq reads as its end: percent-encode them (%2F, %40)"
            )
        }
        let parsed = Self.password(in: conninfo)
        secrets = Self.secrets(parsed: parsed.password, conninfo: conninfo)
        // Defaults come first so that anything in the caller's conninfo (expanded from `dbname`) overrides them;
        // a `PG*` variable the operator set also wins, because explicit keywords would shadow it.
        var keys: [String] = []
        var values: [String] = []
        let environment = ProcessInfo.processInfo.environment
        statements = PreparedStatementCache(enabled: environment["STORERECON_PREPARED_STATEMENTS"] != "off")
        func addDefault(_ key: String, _ value: String, unlessEnv variable: String) {
            if environment[variable] == nil {
                keys.append(key)
                values.append(value)
            }
        }
        addDefault("connect_timeout", "10", unlessEnv: "PGCONNECT_TIMEOUT")
        addDefault("application_name", "storerecon", unlessEnv: "PGAPPNAME")
        keys += ["keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        values += ["1", "30", "10", "3"]
        keys.append("dbname")
        values.append(conninfo)
        SharedPoolCheck.verify("connect")
        DatabaseWorker.releaseHandedWork()
        let connection = Self.withCStrings(keys) { keyPointers in
            Self.withCStrings(values) { valuePointers in
                PQconnectdbParams(keyPointers, valuePointers, 1)
            }
        }
        handle = connection
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            if let connection { PQfinish(connection) }
            handle = nil
            // A bare word is a database name to libpq (expand_dbname), not a conninfo its parser would take.
            let bareName = !conninfo.contains("=") && !conninfo.contains("://")
            let code = Self.connectFailureCode(message, parsable: parsed.parsable || bareName)
            var scrubbed = Self.scrub(message, secrets)
            if !parsed.parsable && !bareName && conninfo.range(of: "password", options: .caseInsensitive) != nil {
                // libpq's parse errors quote the conninfo's words: of a password with a space, the part that was not
                // taken as its value.
                scrubbed = Self.maskingQuotedWords(scrubbed, conninfo: conninfo)
            }
            throw PostgresError(code: code, operation: "connect", message: scrubbed)
        }
        try executeScript(Self.sessionSettings)
    }

    /// What every session runs with, whatever the server's, the database's or a `PG*` variable's defaults: times
    /// in UTC and printed as ISO 8601 (the only form `PostgresTimestamp` reads).
    static let sessionSettings = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'"

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection; later calls fail with `.connectionLost`.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
    }

    /// Whether libpq still considers the connection usable.
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// The server's process id for this session (for `pg_terminate_backend` in tests and operations).
    public var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs one parameterised statement and returns its rows.
    /// - Parameters:
    ///   - sql: the statement, with `$1`, `$2`, ... placeholders. Never build it from data.
    ///   - parameters: the values for the placeholders, sent apart from the SQL text.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> PostgresRows {
        let result = try run(sql, parameters, operation: "query")
        return PostgresRows(result: result)
    }

    /// Runs one parameterised statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [any PostgresEncodable] = []) throws -> Int {
        let result = try run(sql, parameters, operation: "execute")
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs one statement without parameters and returns its command tag (`COMMIT`, or `ROLLBACK` for a COMMIT of an
    /// aborted transaction).
    func commandTag(_ sql: String) throws -> String {
        let result = try run(sql, [], operation: "execute")
        defer { PQclear(result) }
        return String(cString: PQcmdStatus(result))
    }

    /// Runs several statements with no parameters (a migration file). Returns nothing.
    public func executeScript(_ sql: String) throws {
        let handle = try liveHandle(operation: "script")
        let result = PQexec(handle, sql)
        if PreparedStatementCache.scriptMayDropPreparedStatements(sql) { statements.removeAll() }
        try check(result, operation: "script")
        PQclear(result)
    }

    /// The handle for a call that blocks until the server answers; work handed to this thread to run after the
    /// current job goes to a thread of its own first (``DatabaseWorker``).
    func liveHandle(operation: String) throws -> OpaquePointer {
        SharedPoolCheck.verify(operation)
        DatabaseWorker.releaseHandedWork()
        guard let handle else {
            throw PostgresError(code: .connectionLost, operation: operation, message: "the connection is closed")
        }
        return handle
    }

    private func run(_ sql: String, _ parameters: [any PostgresEncodable], operation: String) throws -> OpaquePointer {
        let handle = try liveHandle(operation: operation)
        let texts = parameters.map(\.postgresText)
        for (index, text) in texts.enumerated() where text.map(Self.containsNUL) == true {
            throw PostgresError(
                code: .usage, operation: operation,
                message: "parameter $\(index + 1) contains a NUL byte, which PostgreSQL text cannot hold")
        }
        return try Self.withOptionalCStrings(texts) { pointers in
            try runStatement(sql, pointers, handle: handle, operation: operation)
        }
    }

    /// Throws if `result` is an error, clearing it; returns normally for success statuses.
    func check(_ result: OpaquePointer?, operation: String) throws {
        guard let result else {
            throw lostOrFailed(operation: operation, sqlState: nil)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_EMPTY_QUERY:
            return
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let message = String(cString: PQresultErrorMessage(result))
            PQclear(result)
            if let handle, PQstatus(handle) != CONNECTION_OK {
                statements.removeAll()
                throw PostgresError(
                    code: .connectionLost, operation: operation, sqlState: sqlState,
                    message: Self.scrub(message, secrets))
            }
            throw PostgresError(
                code: sqlState == nil ? .connectionLost : .server, operation: operation, sqlState: sqlState,
                message: Self.scrub(message, secrets))
        }
    }

    func lostOrFailed(operation: String, sqlState: String?) -> PostgresError {
        let message = handle.map { String(cString: PQerrorMessage($0)) } ?? "the connection is closed"
        return PostgresError(
            code: .connectionLost, operation: operation, sqlState: sqlState, message: Self.scrub(message, secrets))
    }

    /// Removes the passwords from a message: the ones the conninfo holds (libpq echoes a conninfo or URI it cannot
    /// parse, whole), then anything shaped like a password (``PostgresCredentials/redact(_:)``).
    static func scrub(_ message: String, _ secrets: [String]) -> String {
        var text = message
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: PostgresCredentials.mask)
        }
        return PostgresCredentials.redact(text)
    }

    /// Every spelling of the conninfo's password: libpq's parse (decoded), and what a lenient scan of the raw text
    /// finds (for a conninfo libpq cannot parse), longest first.
    static func secrets(parsed: String?, conninfo: String) -> [String] {
        var all = Set(PostgresCredentials.passwords(in: conninfo))
        if let parsed, !parsed.isEmpty { all.insert(parsed) }
        return all.sorted { $0.count > $1.count }
    }

    /// Extracts the password from a conninfo string or URI with libpq's own parser, and whether it parses at all.
    static func password(in conninfo: String) -> (password: String?, parsable: Bool) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &errorMessage) else {
            if let errorMessage { PQfreemem(errorMessage) }
            return (nil, false)
        }
        defer { PQconninfoFree(options) }
        var pointer = options
        while let keyword = pointer.pointee.keyword {
            if String(cString: keyword) == "password", let value = pointer.pointee.val {
                return (String(cString: value), true)
            }
            pointer += 1
        }
        return (nil, true)
    }

    static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { pointers.forEach { free($0) } }
        return body(pointers.map { $0.map { UnsafePointer($0) } })
    }

    /// Whether `text` holds a NUL byte, which PostgreSQL text cannot hold (`memchr`: a page's parameters are hundreds
    /// of kilobytes, and iterating them byte by byte cost more than building them).
    public static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }

    /// Calls `body` with the strings as NUL-terminated C strings (nil stays nil), all copied into one buffer: a
    /// statement's parameters cost one allocation, not one each.
    static func withOptionalCStrings<R>(
        _ strings: [String?], _ body: ([UnsafePointer<CChar>?]) throws -> R
    ) rethrows -> R {
        let total = strings.reduce(0) { $0 + ($1.map { $0.utf8.count + 1 } ?? 0) }
        return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(total, 1)) { buffer in
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(strings.count)
            var offset = 0
            for string in strings {
                guard var string else {
                    pointers.append(nil)
                    continue
                }
                let start = buffer.baseAddress! + offset
                let count = string.withUTF8 { utf8 in
                    utf8.withMemoryRebound(to: CChar.self) { bytes in
                        if let base = bytes.baseAddress { start.update(from: base, count: bytes.count) }
                        return bytes.count
                    }
                }
                start[count] = 0
                pointers.append(UnsafePointer(start))
                offset += count + 1
            }
            return try body(pointers)
        }
    }
}
