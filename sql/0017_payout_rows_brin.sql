-- storerecon schema: report rows are found by a BRIN index on their report instead of a primary key (issue 26's
-- import figure).
--
-- The primary key (report_id, line) cost a fifth of loading a million earnings rows (its B-tree took every row, in
-- order: 0.8 s of 4.1 s of COPY). Nothing needs it: `PayoutStore` is the only writer, and writes a report's rows once,
-- numbered by their line in the file, in the transaction that inserts the report (a second load of the same report
-- waits on an advisory lock and finds it stored). Every reader takes a report's rows whole, by report; a report's
-- rows are written together, so they lie in adjacent blocks, and a BRIN index on `report_id` (a few pages for
-- millions of rows, almost nothing to maintain) finds them.
ALTER TABLE payout_report_row DROP CONSTRAINT IF EXISTS payout_report_row_pkey;
CREATE INDEX payout_report_row_report ON payout_report_row USING brin (report_id);
