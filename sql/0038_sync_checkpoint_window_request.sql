-- storerecon schema: the backfill request a Google voided window in flight was planned for.
--
-- `backfill google-voided --since/--until` resumes a window in flight only for the same command line; one with other
-- bounds starts a window of its own. The planned window alone cannot tell: a `--since` older than Google's 30 days
-- and an open `--until` are clamped afresh by every run. `window_request` holds the bounds as asked
-- (`since=<RFC 3339> until=<RFC 3339 or open>`), written with the window; NULL for the nightly sync's windows and for
-- windows planned by earlier versions (those resume as before).
ALTER TABLE sync_checkpoint ADD COLUMN window_request text;
