//go:build !unix

package workspace

import "os"

// tryLock always succeeds where flock is not available: the work tree is
// not locked there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }
