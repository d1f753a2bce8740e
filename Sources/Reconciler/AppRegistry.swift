import Postgres

/// Keeps the `app` table in step with the configuration file, so rows can reference their app.
public enum AppRegistry {
    /// Upserts every configured app. Apps removed from the file stay in the table (their rows still refer to them).
    public static func sync(_ configuration: Configuration, on connection: PostgresConnection) throws {
        try connection.transaction { connection in
            for app in configuration.apps {
                try connection.execute(
                    """
                    INSERT INTO app (id, platform, store_app_id, apple_app_id, environment)
                    VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (id) DO UPDATE SET
                        platform = EXCLUDED.platform, store_app_id = EXCLUDED.store_app_id,
                        apple_app_id = EXCLUDED.apple_app_id, environment = EXCLUDED.environment, updated_at = now()
                    WHERE (app.platform, app.store_app_id, app.apple_app_id, app.environment)
                        IS DISTINCT FROM (EXCLUDED.platform, EXCLUDED.store_app_id, EXCLUDED.apple_app_id,
                                          EXCLUDED.environment)
                    """,
                    [app.id, app.platform.rawValue, app.storeAppId, app.appAppleId, app.environment])
            }
        }
    }
}
