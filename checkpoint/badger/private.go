package badger

import (
	"os"
	"path/filepath"
)

// privateFiles takes the group's and others' rights from the files in the
// store's directory. Badger makes its files with the umask's modes (0644,
// or 0666 under umask 000); Open and Close make them 0600, so that between
// them only a file Badger made in the meantime has the umask's mode, in a
// directory that is 0700. A file that cannot be changed is left as it is:
// the store works either way.
func privateFiles(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if m := fi.Mode().Perm(); m&0o077 != 0 {
			_ = os.Chmod(filepath.Join(dir, e.Name()), m&^0o077)
		}
	}
}
