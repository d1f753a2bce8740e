-- storerecon schema: quota_acquire_batch without a query per window (issue 39, PostgreSQL's time in the
-- refund-requests run: docs/performance.md).
--
-- The same rule, parameters and results as sql/0025_quota_acquire_batch.sql, without a query per window: the grants
-- still inside a window are counted by halving the log, which is in time order (every grant is appended at the
-- server's clock, or at the last grant's time when that clock stepped back), instead of by a query over the window's
-- slice. The query copied the slice on every call and took plans of its own in every session: a call cost the server
-- 0.67 ms of CPU with a full minute's log of Google's Orders bucket (2,900 timestamps), 0.15 ms now; 0.136 ms with
-- Apple's 50 a second, 0.125 ms now (the round trip included). (Writing the log and the day's counts in one
-- statement, a data-modifying WITH, was tried and cost more than the two UPDATEs.)
-- quota_acquire (one call at a time, kept for processes of an earlier version) is unchanged; both functions still lock
-- the same rows in the same order and keep the same log.
-- Written by PostgresQuotaGate only.

-- Takes up to p_wanted calls of an (app, API) at one instant, as many as every limit allows now, in one round trip:
--   SELECT * FROM quota_acquire_batch(app, api, backfill, wanted, counts, windows, daily_cap, backfill_cap)
-- Parameters, results and locks as in sql/0025_quota_acquire_batch.sql.
CREATE OR REPLACE FUNCTION quota_acquire_batch(
    p_app text, p_api text, p_backfill boolean, p_wanted integer, p_counts integer[], p_windows double precision[],
    p_daily_cap integer, p_backfill_cap integer,
    OUT granted integer, OUT granted_at timestamptz, OUT wait_seconds double precision, OUT refusal text,
    OUT grant_day date, OUT day_used integer, OUT day_used_backfill integer
) LANGUAGE plpgsql AS $$
DECLARE
    v_grants    timestamptz[];
    v_blocked   timestamptz;
    v_exhausted timestamptz;
    v_now       timestamptz;
    v_opens     timestamptz;
    v_length    integer;
    v_keep      integer := 0;
    v_extra     double precision;
    v_widened   timestamptz;
    v_span      interval;
    v_low       integer;
    v_high      integer;
    v_middle    integer;
BEGIN
    granted := 0;
    SELECT b.grants, b.blocked_until, b.margin_extra_ms / 1000.0, b.margin_widened_at
        INTO v_grants, v_blocked, v_extra, v_widened
        FROM quota_bucket b WHERE b.app_id = p_app AND b.api = p_api FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO quota_bucket (app_id, api) VALUES (p_app, p_api) ON CONFLICT DO NOTHING;
        SELECT b.grants, b.blocked_until, b.margin_extra_ms / 1000.0, b.margin_widened_at
            INTO v_grants, v_blocked, v_extra, v_widened
            FROM quota_bucket b WHERE b.app_id = p_app AND b.api = p_api FOR UPDATE;
    END IF;
    v_length := coalesce(array_length(v_grants, 1), 0);
    v_now := clock_timestamp();
    IF v_length > 0 AND v_grants[v_length] > v_now THEN
        v_now := v_grants[v_length];                -- the server's clock stepped back: keep the log in order
    END IF;
    grant_day := quota_pacific_day(v_now);

    SELECT d.used, d.used_backfill, d.exhausted_at INTO day_used, day_used_backfill, v_exhausted
        FROM quota_day d WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO quota_day (app_id, api, pacific_day) VALUES (p_app, p_api, grant_day) ON CONFLICT DO NOTHING;
        SELECT d.used, d.used_backfill, d.exhausted_at INTO day_used, day_used_backfill, v_exhausted
            FROM quota_day d WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day FOR UPDATE;
    END IF;
    refusal := CASE
        WHEN v_exhausted IS NOT NULL THEN 'store_exhausted'
        WHEN day_used >= p_daily_cap THEN 'cap_reached'
        WHEN p_backfill AND day_used_backfill >= p_backfill_cap THEN 'backfill_share_reached'
    END;                                            -- a NULL cap compares as unknown: no refusal
    IF refusal IS NOT NULL THEN
        UPDATE quota_day d SET refused = d.refused + p_wanted
            WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day;
        RETURN;
    END IF;

    -- A learned margin narrows by half after ten of the longest windows without a throttle, and goes at 1 ms.
    IF v_extra > 0 AND v_widened < v_now - make_interval(secs => 10 * (SELECT max(w) FROM unnest(p_windows) w)) THEN
        v_extra := CASE WHEN v_extra / 2 < 0.001 THEN 0 ELSE v_extra / 2 END;
        v_widened := v_now;
        UPDATE quota_bucket b SET margin_extra_ms = round(v_extra * 1000)::integer, margin_widened_at = v_now
            WHERE b.app_id = p_app AND b.api = p_api;
    END IF;

    -- How many the limits allow now: the day's budget left, and in each window its count less the grants whose
    -- window has not opened again (counted among the window's count most recent: the log is in time order).
    granted := CASE WHEN v_blocked > v_now THEN 0 ELSE greatest(p_wanted, 0) END;
    granted := least(granted, p_daily_cap - day_used);
    IF p_backfill THEN
        granted := least(granted, p_backfill_cap - day_used_backfill);
    END IF;
    FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
        v_keep := greatest(v_keep, p_counts[i]);
        -- The grants still inside the window are the newest of its last count (the log is in time order): the first
        -- of them is found by halving, v_low ending on it (v_length + 1 when there is none).
        v_span := make_interval(secs => p_windows[i] + v_extra);
        v_low := greatest(1, v_length - p_counts[i] + 1);
        v_high := v_length + 1;
        WHILE v_low < v_high LOOP
            v_middle := (v_low + v_high) / 2;
            IF v_grants[v_middle] + v_span > v_now THEN
                v_high := v_middle;
            ELSE
                v_low := v_middle + 1;
            END IF;
        END LOOP;
        granted := least(granted, p_counts[i] - (v_length + 1 - v_low));
    END LOOP;
    granted := greatest(granted, 0);

    IF granted > 0 THEN
        v_grants := v_grants || array_fill(v_now, ARRAY[granted]);
        v_length := v_length + granted;
        IF v_keep > 0 THEN
            v_grants := v_grants[greatest(1, v_length - v_keep + 1) : v_length];
            v_length := least(v_length, v_keep);
        END IF;
        UPDATE quota_bucket b SET grants = v_grants WHERE b.app_id = p_app AND b.api = p_api;
        UPDATE quota_day d
            SET used = d.used + granted,
                used_backfill = d.used_backfill + CASE WHEN p_backfill THEN granted ELSE 0 END,
                last_grant_at = v_now
            WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day
            RETURNING d.used, d.used_backfill INTO day_used, day_used_backfill;
        granted_at := v_now;
    END IF;
    IF granted >= p_wanted THEN
        wait_seconds := 0;
        RETURN;
    END IF;

    -- The calls not granted: refused when the grants spent the day's budget, else told when the next is allowed.
    refusal := CASE
        WHEN day_used >= p_daily_cap THEN 'cap_reached'
        WHEN p_backfill AND day_used_backfill >= p_backfill_cap THEN 'backfill_share_reached'
    END;
    IF refusal IS NOT NULL THEN
        UPDATE quota_day d SET refused = d.refused + (p_wanted - granted)
            WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day;
        RETURN;
    END IF;
    v_opens := v_blocked;
    FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
        IF v_length >= p_counts[i] THEN             -- the p_counts[i]-th most recent grant opens the window again
            v_opens := greatest(v_opens, v_grants[v_length - p_counts[i] + 1]
                                             + make_interval(secs => p_windows[i] + v_extra));
        END IF;
    END LOOP;
    wait_seconds := greatest(0, coalesce(extract(epoch FROM v_opens - v_now), 0));
END
$$;

-- Every grant rewrites its bucket's row and its day's row, and every app's gate grants side by side: with full pages
-- the rows of many apps shared a page, and their updates queued on the page's lock (LWLock:BufferContent, the largest
-- wait of quota_acquire_batch in the 50-app bench on a quieter host: 15 of its 51 samples, 2 of 37 with this). With
-- a tenth of each page filled at insert, each new row has a page to itself or nearly. Existing pages keep their rows
-- (the tables are small: `VACUUM FULL quota_bucket, quota_day` in a quiet moment spreads them too).
ALTER TABLE quota_bucket SET (fillfactor = 10);
ALTER TABLE quota_day SET (fillfactor = 10);
