-- storerecon schema: subscriptions a store said changed, queued for the next recheck (issue 39; design.md "Recheck
-- near expiry", docs/refund-requests.md "Other RTDN messages").
--
-- A Google subscriptionNotification read from storerecon's own RTDN pull subscription (`run refund-requests`) queues
-- its purchase token here. The next `recheck` asks the store about every queued subscription, near expiry or not,
-- and deletes its request in the same transaction as it writes the answer; a token storerecon does not know yet is
-- first added to `subscription` (state 'unknown') so that the recheck can ask about it.
-- Owner: Sources/Reconciler/Recheck/RecheckRequests.swift.
CREATE TABLE recheck_request (
    app_id          text NOT NULL REFERENCES app (id),
    platform        text NOT NULL CHECK (platform IN ('apple', 'google')),
    -- subscription.store_id: Google purchaseToken / Apple originalTransactionId
    purchase_id     text NOT NULL,
    -- the notification's product (Google subscriptionId), for a token not in `subscription` yet
    product_id      text,
    -- why: the notification that asked, e.g. 'rtdn subscription notificationType 4'
    reason          text NOT NULL,
    -- the latest request; a recheck clears only the requests made before it asked the store
    requested_at    timestamptz NOT NULL,
    PRIMARY KEY (app_id, purchase_id)
);
