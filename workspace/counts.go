package workspace

import "sync/atomic"

// IOCounts is the file system and object store work a Repo has done since
// it was opened, counted per operation. Tests use it to hold the cost of
// an operation to what changed rather than to wall time: the difference
// between two readings is the work done in between.
type IOCounts struct {
	Stats  int64 // work tree paths stat'ed (files, and directories checked on the way)
	Reads  int64 // work tree files read to be hashed or stored
	Dirs   int64 // work tree directories listed
	Trees  int64 // tree objects read from the object store
	Stores int64 // objects looked up in, or written to, the object store
}

// Sub returns the work done between the readings o and c.
func (c IOCounts) Sub(o IOCounts) IOCounts {
	return IOCounts{Stats: c.Stats - o.Stats, Reads: c.Reads - o.Reads, Dirs: c.Dirs - o.Dirs,
		Trees: c.Trees - o.Trees, Stores: c.Stores - o.Stores}
}

// Total is the sum of the counts.
func (c IOCounts) Total() int64 { return c.Stats + c.Reads + c.Dirs + c.Trees + c.Stores }

// ioCounts are a Repo's counters; a nil *ioCounts counts nothing.
type ioCounts struct {
	stats, reads, dirs, trees, stores atomic.Int64
}

func (n *ioCounts) stat() {
	if n != nil {
		n.stats.Add(1)
	}
}

func (n *ioCounts) read() {
	if n != nil {
		n.reads.Add(1)
	}
}

func (n *ioCounts) dir() {
	if n != nil {
		n.dirs.Add(1)
	}
}

// IOCounts returns the work done so far.
func (r *Repo) IOCounts() IOCounts {
	n := &r.counts
	return IOCounts{Stats: n.stats.Load(), Reads: n.reads.Load(), Dirs: n.dirs.Load(), Trees: n.trees.Load(), Stores: n.stores.Load()}
}
