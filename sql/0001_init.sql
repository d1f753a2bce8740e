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
    PRIMARY KEY (app_id, original_transaction_id)
);
CREATE INDEX apple_refund_cursor_queue ON apple_refund_cursor (app_id, queued_at) WHERE queued_at IS NOT NULL;
CREATE INDEX apple_refund_cursor_sweep ON apple_refund_cursor (app_id, last_checked_at NULLS FIRST);

-- Shared rate limiting: one row per (app, store API) with the grants of the current rolling window.
CREATE TABLE quota_bucket (
    app_id          text NOT NULL,
    api             text NOT NULL,
    tokens          double precision NOT NULL,
    refilled_at     timestamptz NOT NULL,
    recent_grants   timestamptz[] NOT NULL DEFAULT '{}',   -- grant times inside the rolling window, oldest first
    blocked_until   timestamptz,                             -- set from a 429 / Retry-After
    PRIMARY KEY (app_id, api)
);

-- Shared daily budgets, counted per US-Pacific day.
CREATE TABLE quota_day (
    app_id          text NOT NULL,
    api             text NOT NULL,
    pacific_day     date NOT NULL,
    used            integer NOT NULL DEFAULT 0,
    used_backfill   integer NOT NULL DEFAULT 0,
    refused         integer NOT NULL DEFAULT 0,
    exhausted_at    timestamptz,                   -- the store said "per day": no more calls until the day turns
    PRIMARY KEY (app_id, api, pacific_day)
);

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
