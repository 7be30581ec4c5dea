//go:build !unix

package tmpdir

import "os"

// lockFile does nothing where there is no flock.
func lockFile(*os.File, bool) error { return nil }

// mine is false where ownership cannot be told: nothing is swept.
func mine(string) bool { return false }

// startTime is 0 where there is no /proc.
func startTime(int) (uint64, error) { return 0, nil }

// alive is true where a process cannot be asked about: nothing is swept.
func alive(int, uint64) bool { return true }
