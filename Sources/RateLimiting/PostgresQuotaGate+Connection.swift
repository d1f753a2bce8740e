import Postgres

extension PostgresQuotaGate {
    /// Runs `body` on the gate's connection, opening one when there is none and opening a new one when it was
    /// lost: up to `connectionAttempts` tries, half a second and then two seconds apart.
    /// - Throws: the last `PostgresError` when every try failed, or at once when the error is not one that a new
    ///   connection could cure; `CancellationError` when cancelled between tries.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                let connection = try openConnection()
                return try body(connection)
            } catch let error as PostgresError where error.isRetryable && attempt < connectionAttempts {
                logger.warning(
                    "quota database unavailable, trying again",
                    metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                close()
                local.anyKey.withLock { $0.statistics.reconnects += 1 }
                let pause: Duration = attempt == 1 ? .milliseconds(500) : .seconds(2)
                try await clock.sleep(until: clock.now.advanced(by: pause), tolerance: nil)
                attempt += 1
            }
        }
    }

    private func openConnection() throws -> PostgresConnection {
        if let connection, connection.isOpen { return connection }
        close()
        let opened = try PostgresConnection(conninfo: conninfo)
        connection = opened
        return opened
    }
}
