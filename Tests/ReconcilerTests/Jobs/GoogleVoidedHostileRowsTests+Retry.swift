import Foundation
import Postgres
import StoreSimulator
import TestSupport
import Testing

@testable import Reconciler

extension GoogleVoidedHostileRowsTests {
    /// A page's transaction that the server aborts for a serialization failure runs again: what it set aside is
    /// counted once, as it is stored once (the first attempt's counts went with its rollback).
    @Test func aPageRunAgainForAConflictCountsItsSetAsideRowsOnce() async throws {
        let unstorable = [
            Row(purchaseToken: "t-nul-order", orderId: "GPA.nul\0-order"),
            Row(purchaseToken: "t-year", orderId: "GPA.year-99999", voidedTimeMillis: "3000000000000000"),
        ]
        var options = JobHarness.options(Self.spec)
        JobHarness.unlimited(&options)
        try await StoreSimulator.withRunning(options) { simulator in
            let harness = try JobHarness(stores: SimulatedStores(simulator: simulator, databasePrefix: "gvretry"))
            // The first write of the quarantine fails as a serialization failure would; a sequence is not rolled
            // back, so the attempt after it passes.
            try harness.connection().executeScript(
                """
                CREATE SEQUENCE conflict_once;
                CREATE FUNCTION conflict_once() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF nextval('conflict_once') = 1 THEN
                        RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
                    END IF;
                    RETURN NULL;
                END $$;
                CREATE TRIGGER conflict_once BEFORE INSERT ON quarantine
                    FOR EACH STATEMENT EXECUTE FUNCTION conflict_once();
                """)
            let result = try await harness.googleVoided(transport: try HostileRowsTransport(rows: unstorable))
            #expect(result.exitCode == 0, "\(result.error ?? "")")
            let attempts: Int = try harness.connection().query("SELECT last_value AS n FROM conflict_once")[0]
                .decode("n")
            #expect(attempts >= 2, "the conflict was raised and the page written again")
            #expect(result.counts["quarantined"] == unstorable.count)
            let seen: Int = try harness.connection().query(
                "SELECT coalesce(sum(seen_count), 0)::int AS n FROM quarantine WHERE job = 'google_voided'")[0]
                .decode("n")
            #expect(seen == unstorable.count)
        }
    }
}
