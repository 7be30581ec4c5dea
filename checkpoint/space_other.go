//go:build !linux && !darwin

package checkpoint

// freeSpace cannot tell on this system.
func freeSpace(string) (int64, bool) { return 0, false }
