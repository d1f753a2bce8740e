-- storerecon schema: the stores' refund requests and the answers storerecon sends (issue 39; design.md "Refund
-- requests: answering the stores in time").
--
-- Apple asks with a CONSUMPTION_REQUEST notification and takes Send Consumption Information v2 within 12 hours;
-- Google asks with a pendingRefundReviewNotification (RTDN) and takes orders.reviewrefund within 24 hours. Each request
-- is one row, keyed by the store's own id of the request, so a notification read twice (an overlapping window, a
-- redelivered Pub/Sub message) is one request and is answered at most once. The CHECK values are the raw values of
-- the Swift enums in Sources/Reconciler/RefundRequests/RefundRequestVocabulary.swift.
-- Owner: Sources/Reconciler/RefundRequests (RefundRequestStore, ConsumptionFactStore, RTDNMessageStore).

-- The app backend's facts about a purchase (`import consumption FILE.csv`, or written by the backend itself).
-- One row per purchase: the newest `as_of` wins. Purged after refundRequests.retention.
CREATE TABLE consumption_fact (
    platform                text NOT NULL CHECK (platform IN ('apple', 'google')),
    -- Apple transactionId or originalTransactionId; Google orderId or purchaseToken
    purchase_id             text NOT NULL,
    customer_consented      boolean NOT NULL,
    delivery_status         text NOT NULL CHECK (delivery_status IN ('delivered', 'undelivered_quality_issue',
                                'undelivered_wrong_item', 'undelivered_server_outage', 'undelivered_other')),
    -- consumption_percent x 1000 (Apple's milliunits: 100000 = 100 %); NULL when unknown
    consumption_milli       integer CHECK (consumption_milli BETWEEN 0 AND 100000),
    sample_content_provided boolean NOT NULL,
    as_of                   timestamptz NOT NULL,
    loaded_at               timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform, purchase_id)
);
CREATE INDEX consumption_fact_as_of ON consumption_fact (as_of);

-- One refund request of a store, what was decided, what was sent, and what the store did.
CREATE TABLE refund_request (
    id                  bigserial PRIMARY KEY,
    app_id              text NOT NULL REFERENCES app (id),
    store               text NOT NULL CHECK (store IN ('apple', 'google')),
    -- Apple: the notification's notificationUUID; Google: the Pub/Sub messageId
    request_id          text NOT NULL,
    transaction_id      text NOT NULL,              -- Apple transactionId / Google orderId
    original_id         text,                       -- Apple originalTransactionId / Google purchaseToken
    product_id          text,
    product_type        text,                       -- Apple `type` as sent; Google: subscription or one_time
    country             text,                       -- alpha-2, from the storefront or the order
    family_shared       boolean NOT NULL DEFAULT false,
    reason              text,                       -- consumptionRequestReason / refundReason, raw
    purchased_at        timestamptz,                -- the transaction's purchase (Apple purchaseDate)
    first_purchased_at  timestamptz,                -- the customer's first purchase (Apple originalPurchaseDate)
    expires_at          timestamptz,                -- subscriptions: the end of the period asked about
    pending_token       text,                       -- Google pendingRefundToken (needed to answer)
    received_at         timestamptz NOT NULL,       -- when the store asked (the notification's signedDate)
    deadline            timestamptz NOT NULL,       -- received_at + 12 h (Apple) / 24 h (Google)
    rule                text,                       -- the rule that decided: "rules[2]" or "default"
    preference          text CHECK (preference IN ('decline', 'grant', 'grant_prorated', 'data_only', 'no_answer')),
    facts               jsonb,                      -- the facts and ledger figures the decision used
    body_sent           jsonb,                      -- the exact body sent to the store
    -- NULL while undecided; no_facts and no_consent are decided again on each run until the deadline
    answer              text CHECK (answer IN ('answered', 'missed', 'no_facts', 'no_consent', 'not_supported',
                            'failed')),
    error_code          text,                       -- the store's error code when answer = 'failed'
    sending_since       timestamptz,                -- set (committed) just before the call: a crash never resends
    answered_at         timestamptz,
    decision            text CHECK (decision IN ('refunded', 'declined', 'pending')),
    decided_at          timestamptz,
    revocation_type     text,                       -- Apple REFUND: revocationType
    revocation_milli    integer,                    -- Apple REFUND: revocationPercentage
    first_seen_run      bigint,
    UNIQUE (app_id, store, request_id)
);
-- The open requests of a run, nearest deadline first.
CREATE INDEX refund_request_open ON refund_request (app_id, deadline)
    WHERE answer IS NULL OR answer IN ('no_facts', 'no_consent');
CREATE INDEX refund_request_transaction ON refund_request (app_id, transaction_id);
CREATE INDEX refund_request_received ON refund_request (received_at);

-- Every Real-time developer notification storerecon's own Pub/Sub subscription delivered, stored before it is
-- acknowledged (delivery is at least once: a redelivered message is the same row).
CREATE TABLE rtdn_message (
    app_id          text NOT NULL REFERENCES app (id),
    message_id      text NOT NULL,
    publish_time    timestamptz,
    kind            text NOT NULL CHECK (kind IN ('pending_refund_review', 'voided_purchase', 'subscription',
                        'one_time_product', 'test', 'unknown')),
    notification    jsonb NOT NULL,             -- the decoded DeveloperNotification
    received_at     timestamptz NOT NULL DEFAULT now(),
    handled_at      timestamptz,
    PRIMARY KEY (app_id, message_id)
);
