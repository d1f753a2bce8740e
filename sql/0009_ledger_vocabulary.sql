-- storerecon schema, version 9: the ledger's vocabulary as CHECK constraints.
--
-- Every value the code writes is a case of an enum in Sources/Ledger/LedgerVocabulary.swift whose raw values are
-- exactly these lists, so a typo cannot store a value no report knows.

-- Why a refund's amount is missing or provisional. New: no_refund_event (the order's history has no event for
-- it), over_refunded (the store's figures refund more than the order charged: the order is in the quarantine and
-- its refunds leave the totals), no_configured_price (an estimate was wanted but no price is configured in the
-- sale's currency).
ALTER TABLE refund ADD CONSTRAINT refund_amount_note_check
    CHECK (amount_note IN ('pending', 'order_not_found', 'no_permission', 'family_revoke', 'no_refund_event',
                           'over_refunded', 'no_configured_price'));

-- The job a quarantined row belongs to. New: google_orders (an order whose figures cannot be right).
ALTER TABLE quarantine ADD CONSTRAINT quarantine_job_check
    CHECK (job IN ('google_voided', 'google_orders', 'apple_refunds', 'apple_notifications'));

-- Rows stored by earlier versions with the legacy milliunit amount keep it; new rows leave it NULL (gross_amount,
-- tax_amount and amount_precision are the amounts).
COMMENT ON COLUMN refund.amount_milli IS 'legacy (before version 6): refunded milliunits; not written since version 9';
