-- storerecon schema, version 3: leases know who holds them.
--
-- A lease (claimed_until) kept a claimed row from other processes until it ran out, also when the process holding
-- it had been killed: a run started after a crash skipped those rows and ended "ok" without them. Now a claim also
-- records the server process id of the session that made it (pg_backend_pid()); a row whose claiming session no
-- longer exists in pg_stat_activity is free at once. A lease kept on purpose (an unusable store answer, so no one
-- asks again within the lease) has no session and still runs out by time.
ALTER TABLE subscription ADD COLUMN claimed_backend integer;
ALTER TABLE apple_refund_cursor ADD COLUMN claimed_backend integer;
