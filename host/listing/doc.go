// Package listing is what a listing of many runs is made of, and its
// records, apart from any store or socket. Every checkpoint of the
// workflow carries a Summary of its run (Summarize, graph.WithSummary),
// encoded by hand in a few hundred bytes (codec.go: a listing of 10,000
// runs reads 10,000 of them in well under 100 ms); the store keeps the
// latest one's with the run's index, and a listing reads a run through it
// (Read, FromRecord, SnapshotOf), unless the run waits on an interrupt or
// its summary is missing, stale or of another version: then the run is
// read whole. A listing crosses the control socket as one record of Rows
// (EncodeRows), each run as its store record or, read whole, as its
// status. Decoders refuse what they did not write (another version, a cut
// or damaged record) without a panic or a large allocation.
package listing
