//go:build !linux

package procgroup

// startTime is 0 where there is no /proc: nothing is recorded.
func startTime(pid int) (uint64, error) { return 0, nil }

func bootID() (string, error) { return "", nil }

// killGroup does nothing where there is no /proc to check a group with.
func killGroup(rec record) (bool, error) { return false, nil }
