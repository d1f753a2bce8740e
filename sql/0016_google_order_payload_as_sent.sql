-- storerecon schema: each Google order's payload is kept as `json`, the text exactly as the Orders API sent it
-- (issue 28's figure for the voided sync with amounts).
--
-- As `jsonb` every order was parsed into PostgreSQL's binary form on the way in, about a third of the time
-- `google_order` cost a sync with amounts, for a document nothing queries by key: the only reader takes the text
-- back (`quarantine retry` prices a stored order again). `json` checks the text and keeps it byte for byte.
ALTER TABLE google_order ALTER COLUMN payload TYPE json USING payload::json;
COMMENT ON COLUMN google_order.payload IS
    'The order as the Orders API sent it (its element of the orders.batchget answer), text kept exactly';
