//go:build darwin

package workspace

import "syscall"

// statCtime is st's change time, as time.Unix takes it.
func statCtime(st *syscall.Stat_t) (sec, nsec int64) { return st.Ctimespec.Unix() }
