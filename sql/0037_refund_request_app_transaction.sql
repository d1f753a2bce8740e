-- storerecon schema: the Apple customer of a refund request.
--
-- A request's `appTransactionId` (in signed transactions since 2025, one per customer and app) finds the customer the
-- refund sync grouped (`apple_refund_cursor.app_transaction_id`) when the transaction asked about is new to it, as a
-- consumable's is: the rules' `priorRefundsAtLeast` and `tenureDaysAtLeast` count that customer's other purchases.
ALTER TABLE refund_request ADD COLUMN app_transaction_id text;
