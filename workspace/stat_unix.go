//go:build darwin || linux

package workspace

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillSys copies the stat data git keeps in an index entry, so that the
// git command trusts the entry without reading the file again.
func fillSys(e *index.Entry, fi fs.FileInfo) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	e.CreatedAt = time.Unix(statCtime(st))
	e.Dev = uint32(st.Dev)
	e.Inode = uint32(st.Ino)
	e.UID = st.Uid
	e.GID = st.Gid
}
