-- The first schema of the PostgreSQL checkpoint store (see doc.go).

-- Lease fencing tokens: each lease that changes hands takes the next one.
CREATE SEQUENCE lease_tokens;
-- Activity stamps (the order of Runs) and blob generations.
CREATE SEQUENCE stamps;

-- One row per run: every write of the run updates (or locks) it, so the
-- row serializes the run's writes and carries its lease.
CREATE TABLE runs (
	run_id        bytea PRIMARY KEY, -- run ids may hold any byte, NUL too
	latest        bigint NOT NULL DEFAULT 0,  -- seq of the newest checkpoint, 0: none yet
	stamp         bigint NOT NULL DEFAULT 0,  -- last activity, from stamps
	blob_gen      bigint NOT NULL DEFAULT nextval('stamps'), -- changes when blobs of the run are removed
	lease_owner   text,
	lease_pid     integer,
	lease_host    text,
	lease_token   bigint,
	lease_expires timestamptz
) WITH (fillfactor = 50); -- room for HOT updates: a Put rewrites the row

CREATE TABLE checkpoints (
	run_id bytea  NOT NULL,
	seq    bigint NOT NULL,
	refs   bytea[],         -- SHA-256 of the blobs the record refers to, by index
	record bytea  NOT NULL, -- the checkpoint without its run id and seq (record.go)
	PRIMARY KEY (run_id, seq)
);

-- Values over the blob threshold, stored once per run.
CREATE TABLE blobs (
	run_id bytea NOT NULL,
	sum    bytea NOT NULL,
	data   bytea NOT NULL,
	PRIMARY KEY (run_id, sum)
);

-- Pending writes of finished tasks, on top of checkpoint seq.
CREATE TABLE writes (
	run_id  bytea   NOT NULL,
	seq     bigint  NOT NULL,
	task_id bytea   NOT NULL,
	idx     integer NOT NULL,
	node    text    NOT NULL,
	value   bytea,
	PRIMARY KEY (run_id, seq, task_id, idx)
);
