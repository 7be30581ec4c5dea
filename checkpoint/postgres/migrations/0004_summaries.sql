-- Each checkpoint's summary (checkpoint.Checkpoint.Summary): a small digest
-- of the state that the caller makes, read by Runs for the latest
-- checkpoint of every run, so that listing runs reads no state. NULL for a
-- checkpoint without one (all those written before this migration).
ALTER TABLE checkpoints ADD COLUMN summary bytea;
