//go:build unix

package control

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// unsafeDir says why fi is not a private directory of ours, or "".
func unsafeDir(fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "is a symbolic link"
	}
	if !fi.IsDir() {
		return "is not a directory"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("belongs to uid %d, not to you (uid %d)", st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Sprintf("has mode %v: others may enter it", fi.Mode().Perm())
	}
	return ""
}
