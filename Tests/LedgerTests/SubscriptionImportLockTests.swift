import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

@testable import Ledger

/// A first import copies its rows straight into `subscription`: it holds the table against other writers until it
/// commits, so a token a job adds meanwhile waits instead of failing the whole import on a unique violation.
@Suite struct SubscriptionImportLockTests {
    @Test func aFirstImportHoldsTheTableAndALaterOneDoesNot() throws {
        let conninfo = try TestDatabase.create(prefix: "importlock")
        let importer = try PostgresConnection(conninfo: conninfo)
        defer { importer.close() }
        try Migrator(connection: importer).migrate()
        try importer.execute("INSERT INTO app (id, platform, store_app_id) VALUES ('droid', 'google', 'com.droid')")
        let job = try PostgresConnection(conninfo: conninfo)
        defer { job.close() }
        try job.execute("SET lock_timeout = '200ms'")
        let insert = """
            INSERT INTO subscription (app_id, store_id, product_id, state) VALUES ('droid', $1, 'monthly', 'unknown')
            """

        try importer.execute("BEGIN")
        #expect(try SubscriptionLedger.lockIfFirstImport(apps: ["droid"], on: importer))
        #expect(throws: PostgresError.self) { try job.execute(insert, ["token-1"]) }
        try importer.execute("COMMIT")
        try job.execute(insert, ["token-1"])

        // Not a first import any more: no lock, the staging path merges what others wrote.
        try importer.execute("BEGIN")
        #expect(try !SubscriptionLedger.lockIfFirstImport(apps: ["droid"], on: importer))
        try job.execute(insert, ["token-2"])
        try importer.execute("COMMIT")
    }
}
