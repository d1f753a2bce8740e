-- storerecon schema: a claim says when it was made, so a session that began after another's list of sessions is
-- not taken for gone.
--
-- A claimed row is free at once when the session that claimed it is no longer in pg_stat_activity (0003). But a
-- session reads pg_stat_activity once per transaction, and a claim statement reads it before it locks the row: a
-- session that connected after that read, claimed the row and committed before the lock was missing from the list,
-- so the row was claimed a second time (two processes read one Apple customer's refund history, seen about once in
-- twenty runs of two processes starting their readers at once). Now a claim counts its claimer gone only when the
-- claim was made before the claiming transaction began, and so by a session that was already there when the list
-- was read. Claims made before this version have no time and are judged as before.
ALTER TABLE subscription ADD COLUMN claimed_at timestamptz;
ALTER TABLE apple_refund_cursor ADD COLUMN claimed_at timestamptz;
