package checkpoint

import (
	"os"
	"syscall"
)

// datasync flushes f's data (not its timestamps) to stable storage.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
