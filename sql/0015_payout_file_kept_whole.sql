-- storerecon schema: a financial report's file is kept whole, once, instead of each row's raw values (issue 26's
-- import figure).
--
-- Each row's raw values as a `text[]` doubled what a million-row earnings report wrote (434 MB against 150 MB for
-- the values the tie-out reads) and PostgreSQL's time with it. The file as the store gave it (the zip, the gzip or
-- the text imported by hand) is smaller than any per-row copy (6 MB for a million rows), byte for byte what the
-- store sent, and its SHA-256 is `checksum`: every raw value is in it, found by the row's `line`.
ALTER TABLE payout_report ADD COLUMN file bytea;
COMMENT ON COLUMN payout_report.file IS
    'The report file as fetched or imported (zip, gzip or text); NULL for reports stored before migration 0015, whose rows keep raw';
-- Rows of reports stored before this migration keep their raw values; new rows leave the column NULL.
ALTER TABLE payout_report_row ALTER COLUMN raw DROP NOT NULL;
