-- storerecon schema: a financial report is stored once by its content, and an operator can drop a wrong one
-- (issue 37, "A month close a controller signs").
--
-- Until now a report was the same report by its key (Google: the file's name), so the same earnings zip imported
-- under another name was stored twice and the tie-out counted it twice. From here on the file's SHA-256
-- (`checksum`) is stored once per app, whatever the file's name; `PayoutStore` answers a second load of the same
-- bytes with the report that holds them.
--
-- `storerecon payouts drop ID --reason TEXT` moves a report out of `payout_report` into `payout_report_drop`, file
-- and all, with when and why; its rows go (the file kept here holds every one of them). The tie-out reads only
-- `payout_report`, so a dropped report no longer counts. `import payouts` of a dropped report's bytes stores them
-- again under a new id (the operator named the file); `sync payouts` does not bring a dropped report back.
CREATE TABLE payout_report_drop (
    -- The id the report had while it was loaded (`payout_report`'s sequence: never given to another report).
    id              bigint PRIMARY KEY,
    app_id          text NOT NULL REFERENCES app (id),
    store           text NOT NULL CHECK (store IN ('google', 'apple')),
    report_key      text NOT NULL,
    month           text NOT NULL,
    period_start    date NOT NULL,
    period_end      date NOT NULL,
    source_name     text NOT NULL,
    checksum        text NOT NULL,
    generation      text,
    row_count       integer NOT NULL,
    loaded_at       timestamptz NOT NULL,
    replaced_count  integer NOT NULL,
    -- NULL for reports loaded before migration 0015 (their rows kept the raw values, and go with the drop).
    file            bytea,
    dropped_at      timestamptz NOT NULL DEFAULT now(),
    reason          text NOT NULL CHECK (reason <> '')
);
-- `sync payouts` asks whether content it fetched was dropped; `payouts list` reads an app's drops.
CREATE INDEX payout_report_drop_content ON payout_report_drop (app_id, checksum);

-- Reports already stored twice with the same bytes: the first loaded stays (the tie-out has counted it since), the
-- others are dropped as the command would drop them, the reason naming the report that stays.
INSERT INTO payout_report_drop (id, app_id, store, report_key, month, period_start, period_end, source_name,
                                checksum, generation, row_count, loaded_at, replaced_count, file, reason)
SELECT p.id, p.app_id, p.store, p.report_key, p.month, p.period_start, p.period_end, p.source_name, p.checksum,
       p.generation, p.row_count, p.loaded_at, p.replaced_count, p.file,
       'migration 0020: the same file as report ' || k.kept || ' (stored once by content from this version on)'
FROM payout_report p
JOIN (SELECT app_id, checksum, min(id) AS kept FROM payout_report GROUP BY app_id, checksum HAVING count(*) > 1) k
  ON k.app_id = p.app_id AND k.checksum = p.checksum AND p.id <> k.kept;
DELETE FROM payout_report_row WHERE report_id IN (SELECT id FROM payout_report_drop);
DELETE FROM payout_report WHERE id IN (SELECT id FROM payout_report_drop);

ALTER TABLE payout_report ADD CONSTRAINT payout_report_content UNIQUE (app_id, checksum);
