//go:build linux || darwin

package badger

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// checkOwner refuses a store directory that belongs to another user. Even
// when this process may write it (root), every file Badger made while it
// held the store would be this user's and 0600, so the owner could no
// longer open its own store.
func checkOwner(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: open store %s: %w", dir, err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := os.Geteuid()
	if int(st.Uid) == me {
		return nil
	}
	return &ownerError{msg: fmt.Sprintf("checkpoint: store %s belongs to %s, not to this user (uid %d); run gaffer as its owner (files made now would lock the owner out of its store)",
		dir, userName(st.Uid), me)}
}

// ownerError reports a store of another user; it matches checkpoint.ErrForeignStore.
type ownerError struct{ msg string }

func (e *ownerError) Error() string        { return e.msg }
func (e *ownerError) Is(target error) bool { return target == checkpoint.ErrForeignStore }

// userName names a uid as "name (uid N)", or "uid N" when it has no name.
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return fmt.Sprintf("%s (uid %s)", u.Username, id)
	}
	return "uid " + id
}
