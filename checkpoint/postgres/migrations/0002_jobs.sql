-- serve's run queue (package serve/pgqueue), in the store's schema and
-- migration set: one schema version for everything gaffer keeps in the
-- database, so a binary that does not know the queue refuses the database
-- as it refuses newer checkpoint tables.

-- The order jobs are claimed in.
CREATE SEQUENCE job_order;

-- One row per run that has work queued, executing, parked or failed. A
-- worker claims the first queued row (or a running row whose lease is
-- past, judged by now()) with FOR UPDATE SKIP LOCKED.
CREATE TABLE jobs (
	run_id      text PRIMARY KEY,
	kind        text NOT NULL,      -- start, resume, answer (serve.JobKind)
	spec        bytea,              -- start: the submitter's spec
	answer      bytea,              -- answer: the interrupt's value
	key         text NOT NULL DEFAULT '',
	state       text NOT NULL DEFAULT 'queued', -- queued, running, parked, failed
	ord         bigint NOT NULL DEFAULT nextval('job_order'),
	claim       bigint NOT NULL DEFAULT 0,      -- bumped by each claim: a claim's identity
	claimed_by  text,               -- the host id executing it
	lease_until timestamptz,        -- the database's clock
	recovered   boolean NOT NULL DEFAULT false, -- a previous holder stopped with it
	takeovers   integer NOT NULL DEFAULT 0,     -- claims of it after a holder's lease expired
	last_holder text,               -- the holder a takeover took it from
	cancel      boolean NOT NULL DEFAULT false, -- asked to cancel while running
	error       text                -- failed: the job's error
);
CREATE INDEX jobs_claimable ON jobs (ord) WHERE state IN ('queued', 'running');

-- The serve hosts alive: each renews its row while it runs. A command on
-- any host goes through the database (not a socket) when one is alive.
CREATE TABLE serve_hosts (
	host_id     text PRIMARY KEY,
	hostname    text NOT NULL,
	pid         integer NOT NULL,
	lease_until timestamptz NOT NULL
);
