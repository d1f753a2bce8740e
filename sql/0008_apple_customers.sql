-- Apple refund history is per customer, not per purchase (issue 20): the original transaction ids of one customer
-- (ids whose refund histories return each other's transactions, or that share an appTransactionId or an imported
-- user_ref) are grouped, and one chain of refund history serves the whole group. A group is stood for by one of
-- its rows (its head: customer IS NULL); the other rows name that head in `customer`. Only heads are claimed,
-- queued, swept and hold a revision; a notification naming a member queues its head.
ALTER TABLE apple_refund_cursor ADD COLUMN customer text;
-- The appTransactionId seen in the id's signed transactions (notifications, refund history), when any.
ALTER TABLE apple_refund_cursor ADD COLUMN app_transaction_id text;
-- The latest signedDate of the notifications that queued this customer: Notification History windows overlap, and
-- a notification seen again (no later than this) does not queue the customer again.
ALTER TABLE apple_refund_cursor ADD COLUMN notified_at timestamptz;
CREATE INDEX apple_refund_cursor_members ON apple_refund_cursor (app_id, customer) WHERE customer IS NOT NULL;
CREATE INDEX apple_refund_cursor_app_transaction ON apple_refund_cursor (app_id, app_transaction_id)
    WHERE app_transaction_id IS NOT NULL;
-- The sweep and the backfill claim heads only, the longest unchecked first.
CREATE INDEX apple_refund_cursor_heads ON apple_refund_cursor (app_id, last_checked_at NULLS FIRST)
    WHERE customer IS NULL;
CREATE INDEX subscription_user_ref ON subscription (app_id, user_ref) WHERE user_ref IS NOT NULL;

-- A pending `backfill apple-refunds` per app: when it started and how many customers it queued (its queue is the
-- cursor rows with queue_reason 'backfill'). Nightly syncs take at most sync.appleBackfillPerNight of them.
CREATE TABLE apple_refund_backfill (
    app_id          text PRIMARY KEY REFERENCES app (id),
    started_at      timestamptz NOT NULL DEFAULT now(),
    queued          bigint NOT NULL DEFAULT 0,
    dropped         bigint NOT NULL DEFAULT 0,              -- customers `--cancel` took out of its queue
    finished_at     timestamptz,
    canceled_at     timestamptz
);
