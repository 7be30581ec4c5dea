//go:build unix && !linux

package tmpdir

// startTime is 0 where there is no /proc.
func startTime(int) (uint64, error) { return 0, nil }

// alive reports whether pid may still run: without a start time to
// compare, a reused pid is taken as the owner, and its directory kept.
func alive(pid int, _ uint64) bool { return !signalGone(pid) }
