-- storerecon schema: report rows load without per-row work nothing needs (issue 26's import figure).
--
-- A foreign key fires a trigger for every inserted row; COPY of a million earnings rows spent two thirds of its
-- time in those checks. `payout_report_row` is written only by `PayoutStore`, which inserts a report and its rows in
-- one transaction and deletes a replaced report's rows with it, so the constraint guarded nothing that can happen.
ALTER TABLE payout_report_row DROP CONSTRAINT IF EXISTS payout_report_row_report_id_fkey;
-- Nothing reads report rows by order id: the tie-out reads a report's rows by its id (the primary key's prefix) and
-- matches orders in memory. The index cost a fifth of the load.
DROP INDEX IF EXISTS payout_report_row_order;
