import Postgres

/// The import's writes: the app backend's subscriptions, loaded from a file.
extension SubscriptionLedger {
    /// Whether none of `apps` has a subscription yet (a first import), with the table locked against other writers
    /// until the caller's transaction ends when so: a row a job adds meanwhile (a token an RTDN notification named)
    /// would otherwise meet the copied rows as a bare unique violation.
    public static func lockIfFirstImport(apps: [String], on connection: PostgresConnection) throws -> Bool {
        let empty = "SELECT NOT EXISTS (SELECT 1 FROM subscription WHERE app_id = ANY($1::text[])) AS empty"
        guard try connection.query(empty, [PostgresTextArray(apps)])[0].decode("empty") else { return false }
        try connection.execute("LOCK TABLE subscription IN SHARE ROW EXCLUSIVE MODE")
        return try connection.query(empty, [PostgresTextArray(apps)])[0].decode("empty")
    }

    /// Copies rows `(app_id, store_id, product_id, expires_at, user_ref)`, as `body` writes them, straight into
    /// `subscription` (a first load). Returns the rows copied.
    @discardableResult
    public static func copyImported(
        on connection: PostgresConnection, _ body: (inout CopyWriter) throws -> Void
    ) throws -> Int {
        try connection.copyIn("COPY subscription (app_id, store_id, product_id, expires_at, user_ref) FROM STDIN", body)
    }

    /// Merges the session's staging table `subscription_import` into `subscription` by `(app, store_id)`: a new row
    /// is inserted, a changed product, expiry or `user_ref` updated. A row a store has answered for keeps what the
    /// store said: its product, and its expiry unless the backend's is later (a renewal the backend saw first), so a
    /// stale export imported again neither undoes a recorded change (which the next recheck would record twice) nor
    /// moves the row out of the recheck window. Returns (inserted, updated).
    public static func mergeImported(on connection: PostgresConnection) throws -> (Int, Int) {
        let product = "CASE WHEN s.last_checked_at IS NULL THEN EXCLUDED.product_id ELSE s.product_id END"
        let expiry = """
            CASE WHEN s.last_checked_at IS NULL OR s.expires_at IS NULL OR EXCLUDED.expires_at > s.expires_at
                 THEN EXCLUDED.expires_at ELSE s.expires_at END
            """
        let merged = try connection.query(
            """
            WITH merged AS (
                INSERT INTO subscription AS s (app_id, store_id, product_id, expires_at, user_ref)
                SELECT app_id, store_id, product_id, expires_at, user_ref FROM subscription_import
                ON CONFLICT (app_id, store_id) DO UPDATE SET
                    product_id = \(product),
                    expires_at = \(expiry),
                    user_ref = COALESCE(EXCLUDED.user_ref, s.user_ref),
                    expiry_changed_at = CASE WHEN s.expires_at IS DISTINCT FROM \(expiry)
                                             THEN now() ELSE s.expiry_changed_at END,
                    updated_at = now()
                WHERE (s.product_id, s.expires_at) IS DISTINCT FROM (\(product), \(expiry))
                   OR (EXCLUDED.user_ref IS NOT NULL AND s.user_ref IS DISTINCT FROM EXCLUDED.user_ref)
                RETURNING (xmax = 0) AS inserted
            )
            SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) FILTER (WHERE NOT inserted) AS updated
            FROM merged
            """)[0]
        return (try merged.decode("inserted"), try merged.decode("updated"))
    }
}
