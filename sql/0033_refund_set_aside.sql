-- storerecon schema: a Google refund without revocation keeps when it was first recorded across its order's re-read.
--
-- When a voided row of an order arrives, the order's refunds without revocation (part key `orders:...`, a goodwill
-- refund) are dropped until the Orders API is asked again: the voided list may now show the same money revoked, and
-- the answer puts back each event no voided row claims. The row put back was a new row, recorded when put back: under
-- `report refunds --store-periods --basis recorded`, a refund of a month already closed moved out of it, into the
-- month of the re-read. Each row dropped so now leaves its key and `recorded_at` here; the answer gives a row it puts
-- back its first recording, and forgets what the order had set aside.
CREATE TABLE refund_set_aside (
    app_id          text NOT NULL REFERENCES app (id),
    order_id        text NOT NULL,
    part_key        text NOT NULL,
    recorded_at     timestamptz NOT NULL,
    set_aside_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, order_id, part_key)
);
