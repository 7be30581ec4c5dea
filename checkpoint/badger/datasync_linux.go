package badger

import (
	"errors"
	"math"
	"os"
	"syscall"
)

// datasync flushes f's data (not its timestamps) to stable storage.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

// seekData returns the offset of the first byte of data (not a hole of a
// sparse file) at or after off; past the end when there is none.
func seekData(f *os.File, off int64) (int64, error) {
	const whence = 3 // SEEK_DATA
	d, err := f.Seek(off, whence)
	if errors.Is(err, syscall.ENXIO) {
		return math.MaxInt64, nil
	}
	if err != nil {
		return off, nil // read it all
	}
	return d, nil
}
