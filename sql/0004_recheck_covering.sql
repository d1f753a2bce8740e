-- storerecon schema, version 4: the recheck selection reads its indexes only.
--
-- The three partial indexes of the due query (RecheckPlanner.dueSQL) now carry every column the query returns or
-- filters on beyond their keys and predicates (id, last_checked_at, flagged_at), so each part is an index-only scan:
-- on 10,000,000 subscriptions the listing went from 1.8 s of random table reads to about 0.25 s (scripts/bench,
-- figure "recheck selection"). Index-only scans need the visibility map, which autovacuum keeps current; a table
-- just loaded in bulk reads the table until its first vacuum. Building these locks writes to `subscription` for
-- the time of the build (about 15 s per 10,000,000 rows here); run `storerecon migrate` outside the jobs' hours.
DROP INDEX subscription_recheck_due;
CREATE INDEX subscription_recheck_due ON subscription (app_id, expires_at) INCLUDE (id, last_checked_at)
    WHERE last_checked_at IS NULL OR last_checked_at < expiry_changed_at;

DROP INDEX subscription_recheck_expiring;
CREATE INDEX subscription_recheck_expiring ON subscription (app_id, expires_at) INCLUDE (id, last_checked_at)
    WHERE last_checked_at < expires_at;

DROP INDEX subscription_recheck_watch;
CREATE INDEX subscription_recheck_watch ON subscription (app_id, last_checked_at) INCLUDE (id, flagged_at)
    WHERE state IN ('grace', 'billing_retry', 'on_hold', 'paused', 'pending') OR flagged_at IS NOT NULL;
