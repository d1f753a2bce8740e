import Postgres

/// Applies the embedded migrations: in name order, each in its own transaction, under an advisory lock, recording
/// each file's name and checksum in `schema_migration`.
public struct Migrator {
    /// The lock every migrating process takes, so two hosts never migrate at once.
    public static let lockKey = AdvisoryLockKey("storerecon.migrate")

    private let connection: PostgresConnection
    private let migrations: [Migration]

    /// Creates a migrator for `migrations` (by default the ones compiled into this binary).
    public init(connection: PostgresConnection, migrations: [Migration] = Migration.embedded) {
        self.connection = connection
        self.migrations = migrations.sorted { $0.name < $1.name }
    }

    /// Applies every pending migration.
    /// - Returns: the names applied, empty when the schema was current.
    /// - Throws: `ReconcilerError` (`.migration`) naming the file when an applied one was edited or is unknown, or
    ///   one failed; a `PostgresError` that may pass (``PostgresError/isRetryable``) as it is, naming the file.
    @discardableResult
    public func migrate() throws -> [String] {
        try connection.advisoryLock(Self.lockKey)
        defer { _ = try? connection.advisoryUnlock(Self.lockKey) }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migration (
                name text PRIMARY KEY,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        let pending = try plan()
        for migration in pending {
            try connection.transaction { connection in
                do {
                    try connection.executeScript(migration.sql)
                } catch var error as PostgresError {
                    // A lost connection, a deadlock with a running job, a timeout: the file's transaction rolled back
                    // whole, and running `migrate` again applies it (exit 75, not 1).
                    // A statement timeout is not one: the same file meets it again (exit 1, naming the file).
                    guard error.isRetryable, error.sqlState != "57014" else {
                        throw ReconcilerError(.migration, "migration \(migration.name) failed: \(error)")
                    }
                    error.message = "migration \(migration.name): \(error.message)"
                    throw error
                }
                try connection.execute(
                    "INSERT INTO schema_migration (name, checksum) VALUES ($1, $2)",
                    [migration.name, migration.checksum])
            }
        }
        return pending.map(\.name)
    }

    /// Checks that the schema is exactly current, without changing it (the nightly run's first step).
    /// - Throws: `ReconcilerError` (`.migration`) when migrations are pending, edited or unknown.
    public func verifyCurrent() throws {
        let exists = try connection.query("SELECT to_regclass('schema_migration') IS NOT NULL AS present")
        guard try exists[0].decode("present", as: Bool.self) else {
            throw ReconcilerError(.migration, "the database has no schema yet: run `storerecon migrate`")
        }
        let pending = try plan()
        if !pending.isEmpty {
            let names = pending.map(\.name).joined(separator: ", ")
            throw ReconcilerError(.migration, "migrations pending: \(names); run `storerecon migrate`")
        }
    }

    /// The names of the migrations not yet applied (nothing is changed).
    public func pendingNames() throws -> [String] {
        let exists = try connection.query("SELECT to_regclass('schema_migration') IS NOT NULL AS present")
        guard try exists[0].decode("present", as: Bool.self) else { return migrations.map(\.name) }
        return try plan().map(\.name)
    }

    /// The migrations not yet applied, after checking the applied ones against this binary's copies.
    func plan() throws -> [Migration] {
        let rows = try connection.query("SELECT name, checksum FROM schema_migration ORDER BY name")
        var applied: [String: String] = [:]
        for row in rows {
            applied[try row.decode("name")] = try row.decode("checksum", as: String.self)
        }
        let known = Set(migrations.map(\.name))
        if let unknown = applied.keys.sorted().first(where: { !known.contains($0) }) {
            throw ReconcilerError(
                .migration,
                "the database has migration \(unknown) that this storerecon does not know: install the newer binary")
        }
        for migration in migrations {
            if let checksum = applied[migration.name], checksum != migration.checksum {
                throw ReconcilerError(
                    .migration,
                    "migration \(migration.name) was edited after it was applied (checksum \(checksum.prefix(12))… in "
                        + "the database, \(migration.checksum.prefix(12))… now); add a new migration instead")
            }
        }
        return migrations.filter { applied[$0.name] == nil }
    }
}
