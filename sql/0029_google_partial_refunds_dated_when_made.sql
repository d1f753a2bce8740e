-- storerecon schema: a Google partial refund read from its order alone is dated when it was made.
--
-- A processed `partialRefundEvents[]` entry that no voided row claims (a partial refund by amount, or a part older
-- than the voided list's 30 days) was dated at the event's processTime, which can be days after its createTime; the
-- same part read from the voided list is dated at its voidedTimeMillis, seconds from createTime. So one refund's day,
-- and its month in the tie-out, depended on how storerecon learned of it. Such rows are now dated at createTime,
-- which their part key already holds (`orders:partial:<createTime in ms>`, docs/design.md "How an order's refunds
-- add up"); this re-dates the rows written before. Nothing else of them changes; no row is added or removed.
UPDATE refund
SET refunded_at = to_timestamp(substring(part_key FROM '^orders:partial:(-?[0-9]+)$')::bigint / 1000.0)
WHERE platform = 'google'
  AND part_key ~ '^orders:partial:-?[0-9]+$'
  AND refunded_at IS DISTINCT FROM
      to_timestamp(substring(part_key FROM '^orders:partial:(-?[0-9]+)$')::bigint / 1000.0);
