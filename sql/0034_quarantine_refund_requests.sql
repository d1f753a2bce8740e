-- storerecon schema: `run refund-requests` sets aside the Notification History payloads that fail verification.
--
-- It used to log them and hold its checkpoint, so one payload that fails every time (a wrong root, a spoiled
-- notification Apple keeps serving) held the window for good, and every run read a growing span again. The payload
-- now goes to the quarantine like the nightly job's; one that fails again there no longer holds the window.
ALTER TABLE quarantine DROP CONSTRAINT quarantine_job_check;
ALTER TABLE quarantine ADD CONSTRAINT quarantine_job_check
    CHECK (job IN ('google_voided', 'google_orders', 'apple_refunds', 'apple_notifications', 'apple_refund_requests'));
