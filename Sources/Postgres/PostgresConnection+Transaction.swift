import CLibPQ

extension PostgresConnection {
    /// Runs `body` inside `BEGIN` / `COMMIT`; rolls back and rethrows when `body` throws.
    ///
    /// A rollback that fails because the connection is gone is not reported over the original error: the
    /// server discards an unfinished transaction when its session ends.
    @discardableResult
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            if isOpen { _ = try? execute("ROLLBACK") }
            throw error
        }
        do {
            try execute("COMMIT")
        } catch let error as PostgresError {
            throw PostgresError(
                code: error.code, operation: "commit", sqlState: error.sqlState, message: error.message)
        }
        return value
    }
}
