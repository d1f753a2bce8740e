-- storerecon schema, version 12: refund reports as accounting entries (issue 26, "Reports that foot").
--
-- A refund is booked in the period it happened and stays there; a reversal (Apple REFUND_REVERSED) is a negative
-- entry in the period of the reversal. `report refunds --basis recorded` books each entry by when storerecon first
-- recorded it instead, so a closed month's report prints the same figures when run again later.

-- When storerecon first recorded the refund. Every writer sets it (now()); rows of earlier versions without it take
-- the start of the run that first saw them, or else the refund's own time (the earliest it can have been recorded).
UPDATE refund r SET recorded_at = coalesce(
    (SELECT j.started_at FROM job_run j WHERE j.id = r.first_seen_run), r.refunded_at)
WHERE r.recorded_at IS NULL;
ALTER TABLE refund ALTER COLUMN recorded_at SET DEFAULT now();
ALTER TABLE refund ALTER COLUMN recorded_at SET NOT NULL;

-- When storerecon first recorded the reversal. Reversals stored before this version take the reversal's own time
-- (the earliest they can have been recorded).
ALTER TABLE apple_refund_reversal ADD COLUMN recorded_at timestamptz;
UPDATE apple_refund_reversal SET recorded_at = reversed_at;
ALTER TABLE apple_refund_reversal ALTER COLUMN recorded_at SET DEFAULT now();
ALTER TABLE apple_refund_reversal ALTER COLUMN recorded_at SET NOT NULL;

-- The report's range scans: refunds by recorded time, reversals by their time (few rows, hence partial).
CREATE INDEX refund_recorded_at ON refund (recorded_at);
CREATE INDEX refund_reversed_at ON refund (reversed_at) WHERE reversed_at IS NOT NULL;

-- An exact amount in nanos (10^-9 of a unit) rounded half to even to `exponent` decimals (a currency's ISO 4217
-- minor unit), still in nanos: report_round_half_even(5495000000, 2) = 5500000000 (5.495 -> 5.50),
-- report_round_half_even(5485000000, 2) = 5480000000 (5.485 -> 5.48). Reports round each entry with it and then
-- add, so every printed total is the sum of the printed rows.
CREATE FUNCTION report_round_half_even(nanos numeric, exponent integer) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (q + CASE WHEN 2 * (nanos - q * step) > step OR (2 * (nanos - q * step) = step AND mod(q, 2) <> 0)
                     THEN 1 ELSE 0 END) * step
    FROM (SELECT trunc(power(10::numeric, 9 - exponent)) AS step) AS s,
         LATERAL (SELECT floor(nanos / s.step) AS q) AS f
$$;
