extension PostgresConnection {
    /// Tries to take a session-level advisory lock without waiting.
    /// - Returns: `true` when this session now holds the lock.
    public func tryAdvisoryLock(_ key: AdvisoryLockKey) throws -> Bool {
        let rows = try query("SELECT pg_try_advisory_lock($1::bigint) AS locked", [key.value])
        return try rows[0].decode("locked", as: Bool.self)
    }

    /// Takes a session-level advisory lock, waiting for it.
    public func advisoryLock(_ key: AdvisoryLockKey) throws {
        try query("SELECT pg_advisory_lock($1::bigint)", [key.value])
    }

    /// Releases a session-level advisory lock this session holds.
    /// - Returns: `false` when the session did not hold it.
    @discardableResult
    public func advisoryUnlock(_ key: AdvisoryLockKey) throws -> Bool {
        let rows = try query("SELECT pg_advisory_unlock($1::bigint) AS released", [key.value])
        return try rows[0].decode("released", as: Bool.self)
    }
}

/// A 64-bit advisory lock key derived from a readable name, so that locks are named in code and in Runbook
/// queries (`SELECT ... FROM pg_locks WHERE objid = ...`), yet stable across builds and hosts.
public struct AdvisoryLockKey: Sendable, Hashable, CustomStringConvertible {
    /// The key passed to `pg_advisory_lock(bigint)`.
    public let value: Int64
    /// The name it was derived from.
    public let name: String

    /// Derives the key from a name with 64-bit FNV-1a (stable, unlike `Hasher`).
    public init(_ name: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        self.name = name
        self.value = Int64(bitPattern: hash)
    }

    public var description: String { "\(name) (\(value))" }
}
