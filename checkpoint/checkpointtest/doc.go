// Package checkpointtest is the conformance suite every checkpoint.Store
// must pass. A store's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Store {
//			return checkpoint.NewMemory()
//		})
//	}
//
// The suite closes every store it opens. Lease tests use the real clock
// (with short TTLs, never asserting on elapsed time) and real process ids: a
// pid of a child process that has exited stands for a crashed holder.
package checkpointtest
