-- storerecon schema: what a refund request cost or saved, the Google order behind a review, and the usage evidence
-- the app backend gives for Google's reviews (issue 39; docs/refund-requests.md, "Outcomes", "Money" and "Usage
-- evidence").
-- Owner: Sources/Reconciler/RefundRequests (RefundRequestStore, ConsumptionUsageEventStore).

-- The purchase's price, for the money kept when the store declines: Apple's signed transaction (`price`
-- milliunits x 10^6, `currency`), Google's order total (google_order, or orders.get). NULL when unknown.
ALTER TABLE refund_request
    ADD COLUMN price_nanos bigint,
    ADD COLUMN currency text,
    -- Google: when orders.get was asked for the order's product, country and total (once per request).
    ADD COLUMN order_read_at timestamptz;

-- Requests whose outcome is still to be read (Google: once the review is over; Apple: from the ledger).
CREATE INDEX refund_request_undecided ON refund_request (app_id, store, deadline)
    WHERE decision IS NULL OR decision = 'pending';

-- Usage evidence for Google's refund reviews (`consumptionUsageEvents[]` of orders.reviewrefund), written by the app
-- backend. Personal data (IP address, location): the rows of a purchase are deleted in the transaction that records
-- the answer (sent or not), and rows older than refundRequests.retention by the nightly purge.
CREATE TABLE consumption_usage_event (
    id                      bigserial PRIMARY KEY,
    purchase_id             text NOT NULL,      -- Google orderId or purchaseToken
    consumption_time        timestamptz,
    ip_address              text,
    region_code             text,               -- CLDR region code (location.regionCode)
    administrative_area     text,
    locality                text,
    sublocality             text,
    obfuscated_account_id   text,
    obfuscated_profile_id   text,
    item_description        text,               -- sent cut to 5000 characters
    loaded_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX consumption_usage_event_purchase ON consumption_usage_event (purchase_id, consumption_time DESC);
CREATE INDEX consumption_usage_event_loaded ON consumption_usage_event (loaded_at);
