-- storerecon schema: an Apple customer whose last read failed.
--
-- A read that fails for that customer alone (an answer that is not Apple's JSON, a page that fails verification, a
-- history paging in a circle, a retryable "not found") gives the customer back with `last_checked_at` set, so the
-- same run does not claim it again. `read_failed_at` says that read did not happen: the sweep asks again at its next
-- run rather than after `sync.appleRecheckAfter`, and `backfill apple-refunds --all` queues it as one not read.
-- A read to the end clears it.
ALTER TABLE apple_refund_cursor ADD COLUMN read_failed_at timestamptz;
