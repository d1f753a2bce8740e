-- storerecon schema: a store's month stays closed from its report's first load, through the store's re-issues.
--
-- `report refunds --store-periods --basis recorded` closes a store's month when its financial report is loaded. A
-- re-issued report (the store's same object with other bytes) replaces the old version, and its `loaded_at` is the
-- re-issue's: the month's close moved later, and entries recorded in between (booked after the close, in the month
-- they were recorded) moved back into the closed month, changing the figures filed with the close. `closed_at` is
-- when the month was first closed; a re-issue keeps it, `loaded_at` still says when these bytes were loaded. Reports
-- replaced before this version keep the re-issue's time: their first load is not known.
ALTER TABLE payout_report ADD COLUMN closed_at timestamptz;
UPDATE payout_report SET closed_at = loaded_at;
ALTER TABLE payout_report ALTER COLUMN closed_at SET DEFAULT now();
ALTER TABLE payout_report ALTER COLUMN closed_at SET NOT NULL;
