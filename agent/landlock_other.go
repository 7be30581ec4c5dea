//go:build !linux

package agent

import "errors"

// landlockRules does not exist outside Linux.
type landlockRules struct{}

// landlockAvailable is nil outside Linux.
func landlockAvailable() (*landlockRules, string) {
	return nil, "Landlock is Linux only"
}

func (r *landlockRules) restrictThread(writable []string) error {
	return errors.New("agent: Landlock is Linux only")
}
