-- storerecon schema, version 5: a store's data never stops a job.
--
-- A row a job cannot store (a key field missing, a value of the wrong JSON type, an id longer than the ledger
-- allows, a row the database refuses, a signed payload that fails verification) is set aside here with its raw
-- form and the reason, and the rest of its page lands; `status` shows the rows not yet acknowledged and exits 1
-- ("attention") while there are any. `storerecon quarantine retry` re-applies a row through the job's normal path
-- and marks it landed when it is stored; `quarantine drop` records why one is abandoned.
CREATE TABLE quarantine (
    id              bigserial PRIMARY KEY,
    app_id          text NOT NULL REFERENCES app (id),
    -- google_voided, apple_refunds (Refund History), apple_notifications (Notification History), recheck
    job             text NOT NULL,
    first_run       bigint,                         -- the job_run that first set it aside
    last_run        bigint,                         -- the latest job_run that met it again
    natural_key     text,                           -- what the row says it is (orderId, transactionId, ...), clipped
    -- The row exactly as the store sent it: a JSON object, or a compact JWS. Kept as text (a NUL byte, which text
    -- cannot hold, is written as the JSON escape \u0000), clipped at 1 MiB.
    raw             text NOT NULL,
    reason          text NOT NULL,                  -- the decode error with its field path, or the database's message
    sqlstate        text,                           -- the database's SQLSTATE, when the database refused the row
    context         jsonb NOT NULL DEFAULT '{}',    -- what a retry needs besides the row (e.g. Apple environment)
    quarantined_at  timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now(),
    seen_count      integer NOT NULL DEFAULT 1,     -- how often a run met it (overlapping windows re-read rows)
    resolved_at     timestamptz,
    resolution      text CHECK (resolution IN ('landed', 'dropped')),
    resolution_note text
);
-- A row met again (an overlapping window, a rerun) is the same quarantined row, not a new one.
CREATE UNIQUE INDEX quarantine_row ON quarantine (app_id, job, md5(raw));
CREATE INDEX quarantine_open ON quarantine (app_id, job) WHERE resolved_at IS NULL;

-- Unknown values are kept, not refused: a revocation type this version does not know is stored as 'unknown' (its
-- raw value stays in the payload) instead of failing the row or being taken for a full refund.
ALTER TABLE refund DROP CONSTRAINT refund_refund_type_check;
ALTER TABLE refund ADD CONSTRAINT refund_refund_type_check
    CHECK (refund_type IN ('full', 'prorated', 'partial_quantity', 'family_revoke', 'unknown'));
