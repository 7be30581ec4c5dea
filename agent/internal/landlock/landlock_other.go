//go:build !linux

package landlock

import "errors"

// Rules does not exist outside Linux.
type Rules struct{}

// Available is nil outside Linux.
func Available() (*Rules, string) {
	return nil, "Landlock is Linux only"
}

// ABI is 0 outside Linux.
func (r *Rules) ABI() int { return 0 }

// RestrictThread fails outside Linux.
func (r *Rules) RestrictThread(writable []string) error {
	return errors.New("agent: Landlock is Linux only")
}
