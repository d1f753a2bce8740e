-- storerecon schema: report rows are loaded without a per-row foreign-key check (issue 26's import figure).
--
-- A foreign key fires a trigger for every inserted row; COPY of a million earnings rows spent two thirds of its
-- time in those checks. `payout_report_row` is written only by `PayoutStore`, which inserts a report and its rows in
-- one transaction and deletes a replaced report's rows with it, so the constraint guarded nothing that can happen.
ALTER TABLE payout_report_row DROP CONSTRAINT IF EXISTS payout_report_row_report_id_fkey;
