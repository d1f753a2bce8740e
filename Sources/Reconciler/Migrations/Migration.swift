import Crypto
import Foundation

/// One schema migration: a file of `sql/`, embedded into the binary at build time.
public struct Migration: Sendable, Equatable {
    /// The file name, e.g. `0001_init.sql`; migrations apply in name order.
    public var name: String
    /// The file's SQL text.
    public var sql: String

    /// Creates a migration.
    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }

    /// Hex SHA-256 of the file's bytes, recorded when applied so a later edit is noticed.
    public var checksum: String {
        SHA256.hash(data: Data(sql.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The migrations compiled into this binary, in order.
    public static let embedded: [Migration] = EmbeddedMigrations.files.map { file in
        Migration(name: file.name, sql: String(decoding: Data(base64Encoded: file.base64) ?? Data(), as: UTF8.self))
    }
}
