//go:build !linux && !darwin

package badger

// freeSpace cannot tell on this system.
func freeSpace(string) (int64, bool) { return 0, false }
