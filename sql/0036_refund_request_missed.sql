-- storerecon schema: the requests recorded `missed`, by when they were recorded.
--
-- `status` and the metrics file count the requests missed in the last day. A run after an outage records the
-- requests whose deadline passed meanwhile as `missed` at once, days after their deadlines: they are counted by when
-- they were recorded (`answered_at`), found through this index rather than by reading every request ever received.
CREATE INDEX refund_request_missed ON refund_request (answered_at) WHERE answer = 'missed';
