-- storerecon schema: a closed month keeps its refund amounts (`report refunds --store-periods --basis recorded`).
--
-- The basis `recorded` books an entry recorded after its store's month closed (the month's financial report loaded)
-- in the month it was recorded, so a closed month keeps its refunds. Amounts had no such guard: the ledger holds
-- only the amount of now, so an amount the store stated after the close (a Google refund pending at the month's end
-- and priced later, a configured estimate replaced by the store's amount) changed the closed month's figure.
-- Each such change is now kept, the amounts before and after, and the report books it as an entry of its own
-- (`restated`: the old amount out, the new one in) in the month it was made; `--basis event` never reads this table.
--
-- Only a change of a refund whose time, or reversal's time, falls in a loaded report's period is kept (a day's
-- margin either side: a report chooses its time zone). Any other change is booked in its refund's own month whatever
-- the basis, so keeping it would change no figure; the ledger's usual second write (a Google refund's amount from
-- the Orders API, moments after its voided row) passes the trigger's test and stores nothing.
CREATE TABLE refund_amount_change (
    id              bigserial PRIMARY KEY,
    refund_id       bigint NOT NULL REFERENCES refund (id) ON DELETE CASCADE,
    changed_at      timestamptz NOT NULL DEFAULT now(),
    -- The refund's amount columns before and after the change (see refund.gross_amount ... amount_note).
    old_gross       bigint,
    old_tax         bigint,
    old_precision   smallint,
    old_currency    text,
    old_source      text,
    old_note        text,
    new_gross       bigint,
    new_tax         bigint,
    new_precision   smallint,
    new_currency    text,
    new_source      text,
    new_note        text
);
CREATE INDEX refund_amount_change_refund ON refund_amount_change (refund_id, changed_at, id);

CREATE FUNCTION refund_amount_changed() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM payout_report p
        WHERE p.app_id = NEW.app_id AND p.store = NEW.platform
          AND ((NEW.refunded_at AT TIME ZONE 'UTC')::date BETWEEN p.period_start - 1 AND p.period_end + 1
               OR (NEW.reversed_at AT TIME ZONE 'UTC')::date BETWEEN p.period_start - 1 AND p.period_end + 1))
    THEN
        INSERT INTO refund_amount_change (
            refund_id, old_gross, old_tax, old_precision, old_currency, old_source, old_note,
            new_gross, new_tax, new_precision, new_currency, new_source, new_note)
        VALUES (
            OLD.id, OLD.gross_amount, OLD.tax_amount, OLD.amount_precision, OLD.currency, OLD.amount_source,
            OLD.amount_note, NEW.gross_amount, NEW.tax_amount, NEW.amount_precision, NEW.currency,
            NEW.amount_source, NEW.amount_note);
    END IF;
    RETURN NEW;
END
$$;

-- A change of what the refund moved (an amount, its precision, currency or source), not of its note alone.
CREATE TRIGGER refund_amount_history
BEFORE UPDATE OF gross_amount, tax_amount, amount_precision, currency, amount_source ON refund
FOR EACH ROW
WHEN (OLD.gross_amount IS DISTINCT FROM NEW.gross_amount OR OLD.tax_amount IS DISTINCT FROM NEW.tax_amount
      OR OLD.amount_precision IS DISTINCT FROM NEW.amount_precision OR OLD.currency IS DISTINCT FROM NEW.currency
      OR OLD.amount_source IS DISTINCT FROM NEW.amount_source)
EXECUTE FUNCTION refund_amount_changed();
