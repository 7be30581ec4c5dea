-- When each job last entered the queue (submitted, answered, or released
-- by a drain or a retry), by the database's clock: serve's metrics report
-- the age of the oldest queued job (gaffer_serve_queue_oldest_age_seconds),
-- so that operators can alert on a stuck queue. A job put back because its
-- key was busy on the host that claimed it keeps its time: it still waits.
ALTER TABLE jobs ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now();

-- The queued jobs, oldest first: their count and the oldest's age are read
-- at every scrape of every serve, without visiting the other rows.
CREATE INDEX jobs_queued ON jobs (queued_at) WHERE state = 'queued';
