-- storerecon schema: the Google amounts backlog found by index, not by a scan of the ledger (issue 28: a fleet's
-- night ends when its slowest app does).
--
-- A sync ends by asking for every refund still without the store's amount. Found by scanning the app's every Google
-- refund joined to its order, that cost grew with the ledger, every night (2.2 s at 236,000 rows). The mark says
-- that every Google refund recorded before it has been asked for (`GoogleOrderStore+Backlog.swift`); what can still
-- wait from before it is found by index: orders pending (google_order_pending), orders refused for want of
-- permission (below), orders set aside (quarantine_open). Owner: the ledger's `GoogleOrderStore`.
CREATE TABLE google_backlog_mark (
    app_id          text PRIMARY KEY REFERENCES app (id),
    asked_through   timestamptz NOT NULL
);
CREATE INDEX google_order_refused ON google_order (app_id, fetched_at) WHERE status = 'no_permission';
