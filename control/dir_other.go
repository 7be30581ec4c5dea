//go:build !unix

package control

import "io/fs"

// unsafeDir checks only that fi is a real directory where there are no
// owners and modes to check.
func unsafeDir(fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "is a symbolic link"
	}
	if !fi.IsDir() {
		return "is not a directory"
	}
	return ""
}
