-- storerecon schema: a latency margin the store teaches (issue 27, "the limiter on a loaded host").
--
-- The gate spaces each window's calls by the store's window plus a margin, because a store counts a call when it
-- arrives and storerecon when it grants it. On a loaded host a granted call can arrive later than the configured
-- margin, and the store refuses it. Such a refusal now widens the margin of that (app, API) for every process: the
-- extra is kept here, added to every window by quota_acquire, and halved after ten of the longest windows without a
-- throttle, so a loaded night costs about one refusal per API and a quiet one gets its full rate back. Written by
-- PostgresQuotaGate only (the throttle report sets it; quota_acquire narrows it).
ALTER TABLE quota_bucket
    ADD COLUMN margin_extra_ms   integer NOT NULL DEFAULT 0 CHECK (margin_extra_ms >= 0),
    ADD COLUMN margin_widened_at timestamptz;

CREATE OR REPLACE FUNCTION quota_acquire(
    p_app text, p_api text, p_backfill boolean, p_counts integer[], p_windows double precision[],
    p_daily_cap integer, p_backfill_cap integer,
    OUT granted_at timestamptz, OUT wait_seconds double precision, OUT refusal text,
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
BEGIN
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
        UPDATE quota_day d SET refused = d.refused + 1
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

    v_opens := v_blocked;
    FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
        v_keep := greatest(v_keep, p_counts[i]);
        IF v_length >= p_counts[i] THEN             -- the p_counts[i]-th most recent grant opens the window again
            v_opens := greatest(v_opens, v_grants[v_length - p_counts[i] + 1]
                                             + make_interval(secs => p_windows[i] + v_extra));
        END IF;
    END LOOP;
    IF v_opens > v_now THEN
        wait_seconds := extract(epoch FROM v_opens - v_now);
        RETURN;
    END IF;

    UPDATE quota_bucket b SET grants = (v_grants || v_now)[greatest(1, v_length + 2 - v_keep) : v_length + 1]
        WHERE b.app_id = p_app AND b.api = p_api;
    UPDATE quota_day d
        SET used = d.used + 1, used_backfill = d.used_backfill + CASE WHEN p_backfill THEN 1 ELSE 0 END,
            last_grant_at = v_now
        WHERE d.app_id = p_app AND d.api = p_api AND d.pacific_day = grant_day
        RETURNING d.used, d.used_backfill INTO day_used, day_used_backfill;
    granted_at := v_now;
    wait_seconds := 0;
END
$$;
