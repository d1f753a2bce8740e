-- storerecon schema, version 1.
--
-- One database holds all state: no process keeps progress anywhere else. Every store row has a natural key from
-- the store, so a re-run, an overlapping window or a crash-and-resume never writes a row twice. Times are
-- timestamptz (UTC on the wire); money is bigint milliunits (10990 = 10.99) with its ISO 4217 currency.

-- Configured apps. Rows are upserted from the configuration file at the start of every command that needs them.
CREATE TABLE app (
    id              text PRIMARY KEY,                       -- the configuration's `id`, e.g. acme-ios
    platform        text NOT NULL CHECK (platform IN ('apple', 'google')),
    store_app_id    text NOT NULL,                          -- Apple bundle id or Google package name
    apple_app_id    bigint,                                 -- Apple's numeric app id (appAppleId)
    environment     text NOT NULL DEFAULT 'production',     -- Apple: production, sandbox, xcode, localtesting
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One subscription per Apple originalTransactionId or Google purchaseToken. The app backend inserts here at
-- purchase time, or `storerecon import subscriptions` loads a CSV. The recheck job keeps the state current.
CREATE TABLE subscription (
    id                  bigserial PRIMARY KEY,
    app_id              text NOT NULL REFERENCES app (id),
    store_id            text NOT NULL,              -- originalTransactionId (Apple) / purchaseToken (Google)
    product_id          text NOT NULL,
    user_ref            text,                       -- the app backend's own user reference, opaque here
    -- Normalised state: unknown (never checked), active, canceled (auto-renew off, not yet expired), grace,
    -- billing_retry, on_hold, paused, expired, revoked, pending, replaced, missing (the store no longer knows it).
    state               text NOT NULL DEFAULT 'unknown',
    store_state         text,                       -- the store's raw state: Apple status "1".."5", Google enum
    entitled            boolean NOT NULL DEFAULT true,
    expires_at          timestamptz,
    auto_renew          boolean,
    auto_renew_product_id text,                     -- Apple: the product the next renewal will use
    current_order_id    text,                       -- Apple latest transactionId / Google latestSuccessfulOrderId
    linked_store_id     text,                       -- Google linkedPurchaseToken: the token this one replaced
    replaced_by_store_id text,                      -- set on the old row when a newer token replaced it
    chain_root_store_id text,                       -- first token of a linkedPurchaseToken chain (refund attribution)
    environment         text,                       -- Apple environment the store answered from
    flagged_at          timestamptz,                -- set by refund jobs: re-check soon, whatever the expiry
    flag_reason         text,
    expiry_changed_at   timestamptz NOT NULL DEFAULT now(),  -- last time expires_at moved
    last_checked_at     timestamptz,                -- last successful status call
    missing_since       timestamptz,                -- first time the store answered "not found" in every environment
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app_id, store_id)
);

-- Recheck selection, part 1: subscriptions near expiry that were not checked since their expiry last moved.
-- The partial index holds only those rows, so the range scan reads little more than what it returns even on
-- tens of millions of subscriptions.
CREATE INDEX subscription_recheck_due ON subscription (app_id, expires_at)
    WHERE last_checked_at IS NULL OR last_checked_at < expiry_changed_at;

-- Recheck selection, part 2: states that can change at any moment, and rows flagged by the refund jobs.
CREATE INDEX subscription_recheck_watch ON subscription (app_id, last_checked_at)
    WHERE state IN ('grace', 'billing_retry', 'on_hold') OR flagged_at IS NOT NULL;

-- Refund attribution and linking by the order a refund names.
CREATE INDEX subscription_current_order ON subscription (app_id, current_order_id)
    WHERE current_order_id IS NOT NULL;
CREATE INDEX subscription_state ON subscription (app_id, state, entitled);

-- Append-only log of every observed status change.
CREATE TABLE subscription_transition (
    id              bigserial PRIMARY KEY,
    subscription_id bigint NOT NULL REFERENCES subscription (id),
    old_state       text,
    new_state       text NOT NULL,
    -- renewal, lapse, grace, billing_retry, on_hold, paused, recovered, revoked, upgrade, downgrade,
    -- downgrade_scheduled, replaced, expired, refunded, missing, first_seen, changed
    classification  text NOT NULL,
    old_expires_at  timestamptz,
    new_expires_at  timestamptz,
    old_product_id  text,
    new_product_id  text,
    order_id        text,                           -- the transaction or order that caused it, where known
    source          text NOT NULL,                  -- recheck, google_voided, apple_refunds, import
    job_run_id      bigint,
    observed_at     timestamptz NOT NULL DEFAULT now(),
    detail          jsonb
);
CREATE INDEX subscription_transition_subscription ON subscription_transition (subscription_id, observed_at);

-- The refund ledger: one row per refunded (voided, revoked) store order. Never deleted: a REFUND_REVERSED sets
-- reversed_at. Google quantity-based partial refunds yield several rows for one order, told apart by part_key.
CREATE TABLE refund (
    id              bigserial PRIMARY KEY,
    app_id          text NOT NULL REFERENCES app (id),
    platform        text NOT NULL CHECK (platform IN ('apple', 'google')),
    order_id        text NOT NULL,                  -- Apple transactionId / Google orderId
    -- '' for a whole-order refund; for a Google quantity-based part: "<voidedTimeMillis>:<voidedQuantity>"
    part_key        text NOT NULL DEFAULT '',
    original_id     text,                           -- Apple originalTransactionId / Google purchaseToken
    subscription_id bigint REFERENCES subscription (id),
    product_id      text,
    purchased_at    timestamptz,
    refunded_at     timestamptz NOT NULL,           -- revocationDate / voidedTimeMillis
    recorded_at     timestamptz,                    -- when storerecon first saw it
    reason_code     integer,                        -- raw store code (Apple revocationReason / Google voidedReason)
    reason_label    text NOT NULL DEFAULT 'unknown',
    source_code     integer,                        -- Google voidedSource: 0 user, 1 developer, 2 Google
    refund_type     text NOT NULL CHECK (refund_type IN ('full', 'prorated', 'partial_quantity', 'family_revoke')),
    quantity        integer NOT NULL DEFAULT 1,
    percentage_milli integer,                       -- Apple revocationPercentage (50000 = 50 %)
    price_milli     bigint,                         -- store-reported unit price, milliunits; NULL when unknown
    -- Refunded amount in milliunits: price x quantity, or for Apple prorated refunds
    -- round(price x revocationPercentage / 100000); NULL when the price is unknown. Reports sum this exactly.
    amount_milli    bigint,
    currency        text,
    environment     text,
    reversed_at     timestamptz,                    -- set by REFUND_REVERSED
    first_seen_run  bigint,
    last_seen_run   bigint,
    payload         jsonb NOT NULL,                 -- the verified, decoded store payload
    UNIQUE (app_id, order_id, part_key)
);
CREATE INDEX refund_refunded_at ON refund (refunded_at);
CREATE INDEX refund_original ON refund (app_id, original_id);

-- Per job and app: how far the job has drained the store, and the page it was in the middle of.
CREATE TABLE sync_checkpoint (
    job             text NOT NULL,                  -- google_voided, apple_notifications, backfill:...
    app_id          text NOT NULL REFERENCES app (id),
    high_water      timestamptz,                    -- end of the last fully drained window
    window_start    timestamptz,                    -- the window in flight, when page_token is set
    window_end      timestamptz,
    page_token      text,                           -- continuation token of the next page of that window
    pages_done      integer NOT NULL DEFAULT 0,
    rows_done       bigint NOT NULL DEFAULT 0,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, app_id)
);

-- Windows that could not be fetched any more (older than the store keeps). Shown by `status` until acknowledged.
CREATE TABLE sync_gap (
    id              bigserial PRIMARY KEY,
    job             text NOT NULL,
    app_id          text NOT NULL REFERENCES app (id),
    gap_from        timestamptz NOT NULL,
    gap_to          timestamptz NOT NULL,
    detected_at     timestamptz NOT NULL DEFAULT now(),
    acknowledged_at timestamptz,
    UNIQUE (job, app_id, gap_from, gap_to)
);

-- Apple: one row per customer (originalTransactionId) whose refund history storerecon asks for.
CREATE TABLE apple_refund_cursor (
    app_id          text NOT NULL REFERENCES app (id),
    original_transaction_id text NOT NULL,
    revision        text,                           -- Apple's revision after the last page read
    last_checked_at timestamptz,
    queued_at       timestamptz,                    -- set when a notification names the customer
    queue_reason    text,                           -- REFUND, REFUND_REVERSED, REVOKE, backfill
    -- A process working on this customer holds a short lease, so concurrent processes (FOR UPDATE SKIP LOCKED when
    -- claiming) never ask for the same customer twice; a crashed worker's lease simply runs out.
    claimed_until   timestamptz,
    claimed_by      text,
    PRIMARY KEY (app_id, original_transaction_id)
);
CREATE INDEX apple_refund_cursor_queue ON apple_refund_cursor (app_id, queued_at) WHERE queued_at IS NOT NULL;
CREATE INDEX apple_refund_cursor_sweep ON apple_refund_cursor (app_id, last_checked_at NULLS FIRST);

-- Apple REFUND_REVERSED notifications, kept by transaction so a reversal seen before its refund (or whose refund
-- arrives later from Refund History) still nets the refund out when it is stored.
CREATE TABLE apple_refund_reversal (
    app_id          text NOT NULL REFERENCES app (id),
    transaction_id  text NOT NULL,
    reversed_at     timestamptz NOT NULL,
    PRIMARY KEY (app_id, transaction_id)
);

-- Shared rate limiting (module RateLimiting). Every process on every host takes its store calls through
-- quota_acquire(), which locks the (app, API) row, so the limits hold for all of them together. All times come
-- from the database server's clock (clock_timestamp()): the one clock every host shares. No foreign key to app:
-- limits apply whether or not the app row has been written yet (--dry-run writes none).
--
-- One row per (app, store API): a sliding log of the most recent grants, and the block a store's throttling set.
CREATE TABLE quota_bucket (
    app_id          text NOT NULL,                  -- the configuration's app id
    api             text NOT NULL,                  -- the store API (StoreAPI raw value), e.g. google.voidedpurchases
    -- The most recent grant times, oldest first, as many as the largest window's count. A call is granted only
    -- when, for every window "n calls in any w seconds", the n-th most recent grant is at least w old.
    grants          timestamptz[] NOT NULL DEFAULT '{}',
    blocked_until   timestamptz,                    -- no grants before this: the store's Retry-After, or a backoff
    throttle_streak integer NOT NULL DEFAULT 0,     -- throttles in a row (each within 10 minutes, by default, of the
                                                    -- one before): the backoff's exponent when there is no Retry-After
    throttled_at    timestamptz,                    -- when the store last throttled this API
    PRIMARY KEY (app_id, api)
);

-- Shared daily budgets, counted per US-Pacific day (the day the stores' daily quotas run on).
CREATE TABLE quota_day (
    app_id          text NOT NULL,                  -- the configuration's app id
    api             text NOT NULL,                  -- the store API, as in quota_bucket
    pacific_day     date NOT NULL,                  -- the day in America/Los_Angeles: quota_pacific_day(time of call)
    used            integer NOT NULL DEFAULT 0,     -- calls granted, all purposes
    used_backfill   integer NOT NULL DEFAULT 0,     -- of those, calls granted to backfills (capped at their share)
    refused         integer NOT NULL DEFAULT 0,     -- calls refused: the day's budget (or the backfill share) was spent
    throttled       integer NOT NULL DEFAULT 0,     -- throttles and quota answers the store sent
    exhausted_at    timestamptz,                    -- the store said "per day": no more calls until the day turns
    last_grant_at   timestamptz,                    -- the latest grant of the day
    PRIMARY KEY (app_id, api, pacific_day)
);

-- The US-Pacific day (America/Los_Angeles, daylight saving aware, from the server's time zone database) that
-- contains an instant.
CREATE FUNCTION quota_pacific_day(instant timestamptz) RETURNS date
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT (instant AT TIME ZONE 'America/Los_Angeles')::date $$;

-- Takes one call of an (app, API) when every limit allows it now, in one round trip:
--   SELECT * FROM quota_acquire(app, api, backfill, counts, windows, daily_cap, backfill_cap)
-- Parameters: p_backfill says the call is a backfill's; window i allows p_counts[i] calls in any p_windows[i]
-- seconds (the caller's safety margin included); p_daily_cap is the calls per Pacific day (NULL: no cap);
-- p_backfill_cap the calls backfills may take of them (NULL: no separate limit).
-- Returns granted_at (the grant's time, NULL when not granted); wait_seconds (when not granted and not refused:
-- how long until the limits allow the next call); refusal (store_exhausted, cap_reached or backfill_share_reached
-- when the day's budget is spent: ask no more today); and the day's counts after this call.
-- It locks the bucket row, then the day row, always in that order (so no two callers can deadlock), and reads
-- the clock only once it holds the bucket lock, so the log stays in time order.
CREATE FUNCTION quota_acquire(
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
BEGIN
    SELECT b.grants, b.blocked_until INTO v_grants, v_blocked
        FROM quota_bucket b WHERE b.app_id = p_app AND b.api = p_api FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO quota_bucket (app_id, api) VALUES (p_app, p_api) ON CONFLICT DO NOTHING;
        SELECT b.grants, b.blocked_until INTO v_grants, v_blocked
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

    v_opens := v_blocked;
    FOR i IN 1 .. coalesce(array_length(p_counts, 1), 0) LOOP
        v_keep := greatest(v_keep, p_counts[i]);
        IF v_length >= p_counts[i] THEN             -- the p_counts[i]-th most recent grant opens the window again
            v_opens := greatest(v_opens, v_grants[v_length - p_counts[i] + 1] + make_interval(secs => p_windows[i]));
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

-- Every run of every job.
CREATE TABLE job_run (
    id              bigserial PRIMARY KEY,
    job             text NOT NULL,
    app_id          text,
    host            text NOT NULL,
    pid             integer NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    outcome         text,                           -- ok, partial (exit 75), config, failed, skipped
    counts          jsonb NOT NULL DEFAULT '{}',
    calls           jsonb NOT NULL DEFAULT '{}',    -- store calls per API
    error           text
);
CREATE INDEX job_run_recent ON job_run (app_id, job, started_at DESC);
