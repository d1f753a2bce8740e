-- storerecon schema: the stores' monthly financial reports (issue 26), stored whole, once, to tie refunds out.
--
-- A report is one file as the store gave it: a Google Play earnings zip (one CSV) or an Apple FINANCIAL report
-- (gzip of tab-separated rows). Written only by the Payouts module (`PayoutStore`): a file fetched or imported again
-- with the same checksum changes nothing; the same report with another checksum (Google re-issued it) replaces the
-- old one, rows and all, in one transaction.
CREATE TABLE payout_report (
    id              bigserial PRIMARY KEY,
    app_id          text NOT NULL REFERENCES app (id),
    store           text NOT NULL CHECK (store IN ('google', 'apple')),
    -- What makes a report the same report: Google, the object's file name (earnings_YYYYMM_<account>-<n>.zip);
    -- Apple, 'FINANCIAL:ZZ:' and the period's start and end dates.
    report_key      text NOT NULL,
    -- Google: the US-Pacific calendar month of the rows; Apple: the fiscal month (reportDate), the month of End Date.
    month           text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
    -- The report's own period, inclusive (Apple: Start Date .. End Date of its rows; Google: the calendar month).
    period_start    date NOT NULL,
    period_end      date NOT NULL,
    source_name     text NOT NULL,              -- the Cloud Storage object name, the request, or the imported file
    checksum        text NOT NULL,              -- SHA-256 of the file's bytes, hex
    generation      text,                       -- Cloud Storage object generation, when fetched
    row_count       integer NOT NULL,
    loaded_at       timestamptz NOT NULL DEFAULT now(),
    replaced_count  integer NOT NULL DEFAULT 0, -- how many times the store re-issued it
    UNIQUE (app_id, store, report_key)
);
CREATE INDEX payout_report_month ON payout_report (app_id, month);

-- The report's rows, raw values kept (`raw`, in the file's column order) beside the values the tie-out reads.
-- Amounts are exact nanos (10^-9 of a unit) of their currency, as the file printed them.
CREATE TABLE payout_report_row (
    report_id       bigint NOT NULL REFERENCES payout_report (id) ON DELETE CASCADE,
    line            integer NOT NULL,           -- line number in the file (1 = the header)
    kind            text NOT NULL,              -- Google Transaction Type ('Charge refund', ...); Apple 'S' or 'R'
    order_id        text,                       -- Google Description (the orderId); NULL for Apple
    product_id      text,                       -- Google Sku Id; Apple Vendor Identifier
    country         text,                       -- Buyer Country / Country Of Sale (ISO 3166-1 alpha-2)
    booked_at       timestamptz,                -- Google Transaction Date + Time (US Pacific)
    refund_type     text,                       -- Google Refund Type (Full, Partial)
    quantity        integer,                    -- Apple Quantity (negative on returns)
    amount_currency text,                       -- Google Buyer Currency; Apple Customer Currency
    amount_nanos    bigint,                     -- Google Amount (Buyer Currency); Apple Customer Price (per unit)
    merchant_currency text,                     -- Google Merchant Currency; Apple Partner Share Currency
    merchant_nanos  bigint,                     -- Google Amount (Merchant Currency); Apple Extended Partner Share
    raw             text[] NOT NULL,
    PRIMARY KEY (report_id, line)
);
-- The tie-out reads one month's refund rows per order.
CREATE INDEX payout_report_row_order ON payout_report_row (order_id) WHERE order_id IS NOT NULL;
