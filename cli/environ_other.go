//go:build !linux

package cli

// blankInitialEnviron does nothing where there is no /proc/PID/environ.
func blankInitialEnviron(names []string) error { return nil }
