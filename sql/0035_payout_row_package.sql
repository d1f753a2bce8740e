-- storerecon schema: the package a Google earnings row is of.
--
-- Google's earnings files cover the whole developer account (one bucket, `pubsite_prod_rev_<id>`): two Android apps
-- of one account each store the same file, and each app's tie-out read the other's `Charge refund` rows as its own
-- (report-only lines with false causes, and the other app's money in its totals). Each row now keeps its
-- `Product id` (the package name); the tie-out reads the rows of its app's package. Rows stored before have none and
-- are read as before (`payouts drop`, then `import payouts FILE`, stores a report again with it).
ALTER TABLE payout_report_row ADD COLUMN package text;
COMMENT ON COLUMN payout_report_row.package IS 'Google Product id (the package name); NULL for Apple rows and rows stored before 0035';
