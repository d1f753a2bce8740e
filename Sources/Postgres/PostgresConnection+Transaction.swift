import CLibPQ
import Glibc

extension PostgresConnection {
    /// Runs `body` inside `BEGIN` / `COMMIT`; rolls back and rethrows when `body` throws.
    ///
    /// A rollback that fails because the connection is gone is not reported over the original error: the
    /// server discards an unfinished transaction when its session ends.
    @discardableResult
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        // Nested, BEGIN is only a warning and the inner COMMIT would commit the outer transaction's work half done.
        guard isIdle || !isOpen else {
            throw PostgresError(
                code: .usage, operation: "transaction", message: "a transaction is already open on this connection")
        }
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            if isOpen { _ = try? execute("ROLLBACK") }
            throw error
        }
        let tag: String
        do {
            tag = try commandTag("COMMIT")
        } catch let error as PostgresError {
            throw PostgresError(
                code: error.code, operation: "commit", sqlState: error.sqlState, message: error.message)
        }
        // COMMIT of a transaction a failed statement aborted (one `body` caught and went on from) succeeds, as a
        // rollback: nothing was stored.
        guard tag == "COMMIT" else {
            throw PostgresError(
                code: .server, operation: "commit", sqlState: "25P02",
                message: "the transaction had failed and was rolled back (the server answered COMMIT with \(tag))")
        }
        return value
    }
}

extension PostgresConnection {
    /// Like ``transaction(_:)``, but a transaction the server aborted for a deadlock (40P01) or a serialization
    /// failure (40001) runs again, up to `attempts` times in all, after a short random pause. Two processes that
    /// write the same rows in different orders (a sync and a backfill over overlapping windows, each storing pages
    /// and their amounts) can deadlock; the server then rolls back one of them whole, so running it again is safe and
    /// is what the server asks for. A statement this connection prepared before a migration changed its result columns
    /// (``PostgresError/isStalePreparedStatement``) aborts the transaction the same way, and the next attempt prepares
    /// it afresh. `body` must not have effects outside the database that cannot run twice.
    @discardableResult
    public func transactionRetryingConflicts<T>(attempts: Int = 5, _ body: (PostgresConnection) throws -> T) throws
        -> T
    {
        var attempt = 1
        while true {
            do {
                return try transaction(body)
            } catch let error as PostgresError
                where attempt < attempts && isOpen
                && (["40P01", "40001"].contains(error.sqlState ?? "") || error.isStalePreparedStatement)
            {
                attempt += 1
                DatabaseWorker.releaseHandedWork()
                usleep(UInt32.random(in: 5_000...40_000) * UInt32(attempt))
            }
        }
    }
}
