// Package memlimit keeps the heap of a process that drives a run near
// what it holds. Go's collector lets the heap grow to twice the live heap
// between collections; a run's live heap spikes while Badger compacts,
// and its peak RSS was twice that spike. Start sets a soft memory limit
// (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT is set, and raises it
// when the live heap comes near it, so that a process that holds more is
// not collected over and over.
package memlimit
