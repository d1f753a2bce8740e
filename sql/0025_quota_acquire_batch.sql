-- storerecon schema: grants in batches (issue 39, "the quota gate's share of the refund-requests bench").
--
-- When several calls of one (app, API, purpose) wait in a process's gate at once (the refund-request answerer sends
-- groups side by side, a fleet pages many apps), the gate asks for all of them in one round trip. The rule is
-- quota_acquire's, for k calls at one instant: k calls granted now need, in every window "n calls in any w
-- seconds", at most n - k grants already in the window; the day's counts grow by k. quota_acquire stays, unchanged,
-- for processes of the previous version still running: both functions lock the same rows in the same order and keep
-- the same log, so they share one budget.
--
-- The grants log keeps its form (one timestamp per grant, oldest first, as many as the largest window's count):
-- k grants at one instant are k equal timestamps, written with one UPDATE. The array of the Google Orders bucket (up
-- to 3,000 timestamps, 24 kB, TOASTed) is rewritten once per batch rather than once per call; a log of (instant,
-- count) pairs would be smaller still, but quota_acquire of the previous version reads this one.
-- Written by PostgresQuotaGate only.

-- Takes up to p_wanted calls of an (app, API) at one instant, as many as every limit allows now, in one round trip:
--   SELECT * FROM quota_acquire_batch(app, api, backfill, wanted, counts, windows, daily_cap, backfill_cap)
-- Parameters as quota_acquire's, and p_wanted: the calls asked for (1 or more).
-- Returns granted (0 .. p_wanted) and granted_at (their common time, NULL when none); for the calls not granted:
-- refusal (store_exhausted, cap_reached or backfill_share_reached: the day's budget is spent, ask no more today)
-- or wait_seconds (how long until the limits allow the next call); and the day's counts after the grants.
CREATE FUNCTION quota_acquire_batch(
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
    v_inside    integer;
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
        SELECT count(*) INTO v_inside
            FROM unnest(v_grants[greatest(1, v_length - p_counts[i] + 1) : v_length]) g
            WHERE g + make_interval(secs => p_windows[i] + v_extra) > v_now;
        granted := least(granted, p_counts[i] - v_inside);
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
