-- storerecon schema, version 6: finance-grade refund amounts.
--
-- Amounts are integers in the store's own precision: `amount_precision` is the number of decimal digits of the
-- integer (3: Apple milliunits; 8: an Apple prorated refund, milliunits x revocationPercentage in milli-percent;
-- 9: Google Orders API Money, units x 10^9 + nanos). Nothing is rounded when stored; reports add amounts exactly
-- and round half to even to the currency's ISO 4217 minor unit only when printing.

-- What the refund moved, per ledger row.
ALTER TABLE refund
    ADD COLUMN gross_amount     bigint,     -- refunded amount including tax; NULL when unknown (or no money moved)
    ADD COLUMN tax_amount       bigint,     -- refunded tax; NULL when the store does not say (Apple, configured prices)
    ADD COLUMN amount_precision smallint CHECK (amount_precision BETWEEN 0 AND 9),
    -- store: what the store said it refunded; configured: estimated from `products` prices of the configuration
    ADD COLUMN amount_source    text CHECK (amount_source IN ('store', 'configured')),
    -- Why the amount is missing or provisional: pending (Google has not processed the refund yet),
    -- order_not_found, no_permission (the service account cannot read orders), family_revoke (no money moved).
    ADD COLUMN amount_note      text,
    ADD COLUMN buyer_country    text,       -- ISO 3166-1 alpha-2, from the Google order
    ADD COLUMN refund_reason    text,       -- Google order refundReason: CHARGEBACK, OTHER
    -- false: a refund the store made without revoking (Google: seen in the order's history, never in the voided
    -- list; its part_key starts with 'orders:'). Such refunds take nothing away from the subscription.
    ADD COLUMN revoked          boolean NOT NULL DEFAULT true;

-- A Google partial refund by amount (from an order's partialRefundEvents, without revocation).
ALTER TABLE refund DROP CONSTRAINT refund_refund_type_check;
ALTER TABLE refund ADD CONSTRAINT refund_refund_type_check
    CHECK (refund_type IN ('full', 'prorated', 'partial_quantity', 'family_revoke', 'unknown', 'partial_amount'));

-- Existing rows: Apple's `price` is the total for the quantity bought, and revocationPercentage applies to it.
-- Earlier versions multiplied by quantity again; the amounts are recomputed from the stored price. A revocation type
-- this version does not know ('unknown') keeps no amount: what it refunded is not known.
UPDATE refund SET
    gross_amount = CASE WHEN refund_type IN ('family_revoke', 'unknown') THEN NULL
                        WHEN refund_type = 'prorated' AND percentage_milli IS NOT NULL
                            THEN price_milli * percentage_milli
                        ELSE price_milli END,
    amount_precision = CASE WHEN price_milli IS NULL OR refund_type IN ('family_revoke', 'unknown') THEN NULL
                            WHEN refund_type = 'prorated' AND percentage_milli IS NOT NULL THEN 8 ELSE 3 END,
    amount_source = CASE WHEN price_milli IS NULL OR refund_type IN ('family_revoke', 'unknown') THEN NULL
                         ELSE 'store' END,
    amount_note = CASE WHEN refund_type = 'family_revoke' THEN 'family_revoke' END,
    amount_milli = CASE WHEN refund_type IN ('family_revoke', 'unknown') THEN NULL
                        WHEN refund_type = 'prorated' AND percentage_milli IS NOT NULL
                            THEN round(price_milli::numeric * percentage_milli / 100000)::bigint
                        ELSE price_milli END
WHERE platform = 'apple';
UPDATE refund SET gross_amount = amount_milli, amount_precision = 3, amount_source = 'configured'
WHERE platform = 'google' AND amount_milli IS NOT NULL;

-- Google orders as the Orders API (orders.batchget) returned them, one row per order id asked for.
CREATE TABLE google_order (
    app_id          text NOT NULL REFERENCES app (id),
    order_id        text NOT NULL,
    -- ok: fetched; not_found: Google answered 404 for it alone; no_permission: the service account lacks the
    -- financial permission (403); the amounts of its refunds then stay estimated or unknown.
    status          text NOT NULL CHECK (status IN ('ok', 'not_found', 'no_permission')),
    state           text,                       -- Order.state: PROCESSED, PENDING_REFUND, PARTIALLY_REFUNDED, REFUNDED...
    currency        text,
    total_nanos     bigint,                     -- Order.total (units x 10^9 + nanos), tax included
    tax_nanos       bigint,                     -- Order.tax
    revenue_nanos   bigint,                     -- developerRevenueInBuyerCurrency
    buyer_country   text,
    product_id      text,                       -- first line item
    quantity        integer,                    -- first line item's oneTimePurchaseDetails.quantity (1 for subscriptions)
    refund_pending  boolean NOT NULL DEFAULT false,  -- a refund of it is PENDING_REFUND / a partial one PENDING
    fetched_at      timestamptz NOT NULL DEFAULT now(),
    fetch_count     integer NOT NULL DEFAULT 1,
    payload         jsonb,
    PRIMARY KEY (app_id, order_id)
);
-- Orders to ask again: refunds Google has not settled yet.
CREATE INDEX google_order_pending ON google_order (app_id, fetched_at) WHERE refund_pending;
