-- Why an (app, API) is blocked (issue 27): what the store asked and what was kept of it, for `storerecon status`.
ALTER TABLE quota_bucket ADD COLUMN blocked_reason text;

-- A store's throttling answer now blocks an API for a few of its windows at most (minutes). A block stored before
-- that cap, longer than an hour from now (a Retry-After of years, Apple's millisecond form set far ahead), is lifted.
UPDATE quota_bucket SET blocked_until = NULL, throttle_streak = 0
WHERE blocked_until > clock_timestamp() + interval '1 hour';

-- A subscription nobody has asked the store about (state 'unknown': imported, or inserted by the app backend) is
-- not known to be entitled, so it is not entitled (issue 27): the default was true.
ALTER TABLE subscription ALTER COLUMN entitled SET DEFAULT false;
UPDATE subscription SET entitled = false WHERE state = 'unknown' AND entitled;
