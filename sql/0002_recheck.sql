-- storerecon schema, version 2: what the recheck job (`storerecon recheck`) needs beyond version 1.

-- Claiming. A recheck process first lists the due subscriptions (the indexes below), then claims them a few at a
-- time: it locks the rows with FOR UPDATE SKIP LOCKED and sets a short lease, so concurrent processes split the set
-- and never ask the store about one subscription twice. A successful check clears the lease; an answer that could
-- not be used keeps it until it runs out, so no process asks again in the same run, and a crashed worker's lease
-- simply expires.
ALTER TABLE subscription
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN claimed_by    text;              -- host:pid of the process holding the lease

-- Recheck selection, part 3 (parts 1 and 2 are subscription_recheck_due and subscription_recheck_watch in 0001):
-- subscriptions last checked before their current expiry. The job asks about them once when the expiry comes within
-- the lead window (auto-renew turned off, a downgrade scheduled) and once after it passed (renewed or lapsed); a
-- check after the expiry removes the row from this index until the expiry moves again.
CREATE INDEX subscription_recheck_expiring ON subscription (app_id, expires_at)
    WHERE last_checked_at < expires_at;

-- Watched states: paused and pending Google subscriptions change without their expiry moving first (a resume, a
-- completed or cancelled pending payment), so they are watched like grace, billing retry and on hold.
DROP INDEX subscription_recheck_watch;
CREATE INDEX subscription_recheck_watch ON subscription (app_id, last_checked_at)
    WHERE state IN ('grace', 'billing_retry', 'on_hold', 'paused', 'pending') OR flagged_at IS NOT NULL;
