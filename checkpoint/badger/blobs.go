package badger

import (
	"bytes"
	"crypto/sha256"
)

// knownBlobs remembers, per run, the blobs this store has seen committed
// for the run, so that Put does not look each one up again on every step.
//
// Only this process writes the store (Badger locks the directory), so the
// blobs of a run can disappear only through Delete or Prune on this store.
// Both forget the run before they start and again after they finish, and
// bump gen; a Put remembers its blobs only when gen did not move while it
// ran. A Put that skipped the lookup of a blob that a concurrent Prune then
// deletes still fails to commit: collectBlobs writes the run's index, which
// every Put reads, so Badger reports a conflict and the Put runs again,
// after the run was forgotten. Entries are kept per lease token: a new
// holder of the run starts afresh.
type knownBlobs struct {
	gen  uint64
	runs map[string]*runBlobs
}

type runBlobs struct {
	token uint64
	sums  map[blobRef]struct{}
	// last holds the run's large values of its last Put, with their
	// hashes, so that an unchanged value is compared, not hashed again.
	// The map is replaced, never changed, so Put reads it without the lock.
	last map[string]lastValue
}

// lastValue is a copy of a value and its SHA-256.
type lastValue struct {
	data []byte
	sum  blobRef
}

// maxLastValue is the largest value whose copy is kept for hashing.
const maxLastValue = 1 << 20

// Bounds on what is remembered; past them the cache starts afresh, which
// costs lookups, never correctness.
const (
	maxKnownRuns  = 256
	maxKnownBlobs = 4096
)

// knownOf reports which of blobs are known for runID under the lease
// token, and the generation to pass to rememberBlobs.
func (s *Store) knownOf(runID string, token uint64, blobs []blob) ([]bool, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.known.runs[runID]
	if r == nil || r.token != token || len(blobs) == 0 {
		return nil, s.known.gen
	}
	known := make([]bool, len(blobs))
	for i, b := range blobs {
		_, known[i] = r.sums[b.sum]
	}
	return known, s.known.gen
}

// rememberBlobs records blobs committed for runID by a Put that started at
// generation gen.
func (s *Store) rememberBlobs(runID string, token uint64, blobs []blob, gen uint64) {
	if len(blobs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known.gen != gen {
		return
	}
	r := s.known.runs[runID]
	if r == nil || r.token != token || len(r.sums)+len(blobs) > maxKnownBlobs {
		if s.known.runs == nil || len(s.known.runs) >= maxKnownRuns {
			s.known.runs = make(map[string]*runBlobs)
		}
		r = &runBlobs{token: token, sums: make(map[blobRef]struct{})}
		s.known.runs[runID] = r
	}
	same := len(r.last) == len(blobs)
	for _, b := range blobs {
		r.sums[b.sum] = struct{}{}
		if p, ok := r.last[b.name]; !ok || p.sum != b.sum {
			same = false
		}
	}
	if same {
		return // the run's large values did not change
	}
	last := make(map[string]lastValue, len(blobs))
	for _, b := range blobs {
		if p, ok := r.last[b.name]; ok && p.sum == b.sum {
			last[b.name] = p
		} else if len(b.data) <= maxLastValue {
			last[b.name] = lastValue{data: bytes.Clone(b.data), sum: b.sum}
		}
	}
	r.last = last
}

// hasher returns the blob hash function for a Put of runID: the hash of the
// run's last value of a field when the value is unchanged, else SHA-256.
func (s *Store) hasher(runID string, token uint64) func(name string, v []byte) blobRef {
	s.mu.Lock()
	var last map[string]lastValue
	if r := s.known.runs[runID]; r != nil && r.token == token {
		last = r.last
	}
	s.mu.Unlock()
	return func(name string, v []byte) blobRef {
		if p, ok := last[name]; ok && bytes.Equal(p.data, v) {
			return p.sum
		}
		return sha256.Sum256(v)
	}
}

// forgetBlobs drops what is known about runID's blobs.
func (s *Store) forgetBlobs(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known.gen++
	delete(s.known.runs, runID)
}

// dropKnownRun frees what is remembered for a run whose lease is released;
// unlike forgetBlobs it leaves other Puts' remembering alone.
func (s *Store) dropKnownRun(runID string, token uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.known.runs[runID]; r != nil && r.token == token {
		delete(s.known.runs, runID)
	}
}
