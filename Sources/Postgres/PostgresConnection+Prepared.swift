import CLibPQ

extension PostgresConnection {
    /// Runs one statement with its parameters: unnamed on its first use, prepared and run by name from its second use
    /// on this connection (``PreparedStatementCache``), so the server parses, analyses and plans a hot statement once
    /// per session rather than on every call.
    /// - Returns: the successful result, to be cleared by the caller.
    func runStatement(
        _ sql: String, _ values: [UnsafePointer<CChar>?], handle: OpaquePointer, operation: String,
        retry: Bool = true
    ) throws -> OpaquePointer {
        switch statements.step(for: sql) {
        case .unnamed:
            let result = PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 0)
            try check(result, operation: operation)
            if PreparedStatementCache.dropsPreparedStatements(sql) { statements.removeAll() }
            return result!
        case .prepare(let name):
            return try prepareAndRun(sql, name: name, values, handle: handle, operation: operation)
        case .execute(let name):
            let idle = PQtransactionStatus(handle) == PQTRANS_IDLE
            let result = PQexecPrepared(handle, name, Int32(values.count), values, nil, nil, 0)
            guard let stale = Self.staleStatement(result) else {
                try check(result, operation: operation)
                return result!
            }
            // 26000: the session lost its statements behind the cache's back; 0A000: a table it reads changed shape.
            if stale == .missing { statements.removeAll() } else { statements.forget(sql) }
            // Outside a transaction block the failed call changed nothing, so preparing it again is safe; inside
            // one the server aborted the transaction, which only the caller can run again.
            guard idle, retry else { throw staleError(result, stale, operation: operation) }
            PQclear(result)
            return try runStatement(sql, values, handle: handle, operation: operation, retry: false)
        }
    }

    /// Why a prepared statement can no longer run as prepared.
    enum StaleStatement {
        /// The session does not have it (SQLSTATE 26000).
        case missing
        /// A table it reads changed its result row type (SQLSTATE 0A000, "cached plan must not change result type").
        case resultTypeChanged
    }

    static func staleStatement(_ result: OpaquePointer?) -> StaleStatement? {
        guard let result, PQresultStatus(result) == PGRES_FATAL_ERROR,
            let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map({ String(cString: $0) })
        else { return nil }
        if code == "26000" { return .missing }
        guard code == "0A000", let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))) else { return nil }
        return String(cString: primary).contains("cached plan must not change result type") ? .resultTypeChanged : nil
    }

    /// The error for a stale statement inside a transaction block: the server's, saying what to do.
    private func staleError(_ result: OpaquePointer?, _ stale: StaleStatement, operation: String) -> Error {
        do {
            try check(result, operation: operation)
            return PostgresError(code: .server, operation: operation, message: "prepared statement failed")
        } catch var error as PostgresError {
            let why =
                stale == .missing
                ? "the session's prepared statements were dropped" : "a table it reads changed its columns"
            error.message =
                error.message.trimmingWhitespace()
                + " (\(why) since this connection prepared the statement; run the transaction again:"
                + " \(PostgresError.preparedAfresh))"
            return error
        } catch {
            return error
        }
    }

    /// Prepares `sql` as `name` and runs it, in one round trip (libpq's pipeline mode: Parse, Bind, Execute, Sync).
    /// A prepare the server rejects caches nothing and throws the server's error, as the unnamed statement would.
    private func prepareAndRun(
        _ sql: String, name: String, _ values: [UnsafePointer<CChar>?], handle: OpaquePointer, operation: String
    ) throws -> OpaquePointer {
        deallocateUnneeded(handle)
        guard PQenterPipelineMode(handle) == 1 else { throw lostOrFailed(operation: operation, sqlState: nil) }
        let sent =
            PQsendPrepare(handle, name, sql, 0, nil) == 1
            && PQsendQueryPrepared(handle, name, Int32(values.count), values, nil, nil, 0) == 1
            && PQpipelineSync(handle) == 1
        let results = sent ? Self.pipelineResults(handle) : []
        guard PQexitPipelineMode(handle) == 1, results.count == 2 else {
            let error = lostOrFailed(operation: operation, sqlState: nil)
            results.forEach { PQclear($0) }
            // A connection left inside a pipeline cannot run the next statement: end it, so every later call says
            // the connection is lost (and the caller's reconnect starts a clean session).
            close()
            throw error
        }
        let (prepare, outcome) = (results[0], results[1])
        guard PQresultStatus(prepare) == PGRES_COMMAND_OK else {
            PQclear(outcome)
            try check(prepare, operation: operation)
            throw lostOrFailed(operation: operation, sqlState: nil)
        }
        PQclear(prepare)
        // The statement stays prepared even when its execution fails or its transaction rolls back.
        statements.prepared(sql, name: name)
        try check(outcome, operation: operation)
        return outcome
    }

    /// The results of a pipeline up to its sync point, in order (one per command; NULLs between them skipped).
    private static func pipelineResults(_ handle: OpaquePointer) -> [OpaquePointer] {
        var results: [OpaquePointer] = []
        var nullsInARow = 0
        while nullsInARow < 3 {
            guard let result = PQgetResult(handle) else {
                nullsInARow += 1
                if PQstatus(handle) != CONNECTION_OK { break }
                continue
            }
            nullsInARow = 0
            if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                PQclear(result)
                break
            }
            results.append(result)
        }
        return results
    }

    /// Deallocates the statements the cache let go, in one round trip, when no transaction is open (an error there
    /// must not abort the caller's transaction; the names wait for the next idle moment). Errors are ignored: a name
    /// the session no longer has is already gone.
    private func deallocateUnneeded(_ handle: OpaquePointer) {
        guard !statements.unneeded.isEmpty, PQtransactionStatus(handle) == PQTRANS_IDLE else { return }
        let script = statements.takeUnneeded().map { "DEALLOCATE \($0)" }.joined(separator: "; ")
        PQclear(PQexec(handle, script))
    }

    /// How many statements this connection holds prepared (for tests and diagnostics).
    public var preparedStatementCount: Int { statements.count }
}
