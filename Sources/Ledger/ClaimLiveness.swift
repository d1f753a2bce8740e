/// When a lease's holder is gone: the claims of `subscription` (the recheck) and `apple_refund_cursor` (Apple's
/// refund history) free a row at once when the session that claimed it has ended, without waiting for the lease.
public enum ClaimLiveness {
    /// SQL true when the claim of a row (its `claimed_at` and `claimed_backend` columns, as named) was made by a
    /// session that has ended. A session lists `pg_stat_activity` once per transaction, before the claim statement
    /// locks its rows: a session that connected after that list, claimed a row and committed is not on it, yet very
    /// much alive. So only a claim made before this transaction began, by a session that was there when the list was
    /// read, is judged by the list (a claim from before schema 32 has no time and is judged by it too); a later one
    /// holds until its lease runs out or it is given back.
    public static func claimerGone(claimedAt: String, backend: String) -> String {
        "coalesce(\(claimedAt), '-infinity') < now() AND \(backend) <> ALL (ARRAY(SELECT pid FROM pg_stat_activity))"
    }
}
