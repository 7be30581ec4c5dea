//go:build !linux

package profile

// blankInitialEnviron does nothing where there is no /proc/PID/environ.
func blankInitialEnviron(names []string) error { return nil }
