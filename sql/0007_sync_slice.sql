-- Google voided windows are paged as several time slices at once, each by its own token chain (issue 20). While a
-- window is in flight (sync_checkpoint.window_start/window_end), each of its slices has a row here: its bounds by
-- recorded time, the token of its next page (stored with each page, in the page's transaction), and whether it is
-- drained. The high-water mark moves only over drained slices; a crash resumes each unfinished slice from its row.
CREATE TABLE sync_slice (
    job             text NOT NULL,
    app_id          text NOT NULL REFERENCES app (id),
    slice_no        integer NOT NULL,               -- position in the window, from 0
    slice_start     timestamptz NOT NULL,
    slice_end       timestamptz NOT NULL,
    page_token      text,
    pages_done      integer NOT NULL DEFAULT 0,
    rows_done       bigint NOT NULL DEFAULT 0,
    drained         boolean NOT NULL DEFAULT false,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, app_id, slice_no)
);

-- The typical time of one call of the job, measured by the last run, from which the next window's slice count
-- follows (NULL until measured).
ALTER TABLE sync_checkpoint ADD COLUMN call_millis integer;
