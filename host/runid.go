package host

import (
	"errors"
	"fmt"
)

// ErrBadRunID is matched by the error CheckRunID returns.
var ErrBadRunID = errors.New("host: not a run id")

// maxRunID is the longest run id accepted.
const maxRunID = 64

// CheckRunID says whether id can be a run id: 1 to 64 letters, digits,
// '.', '_' or '-', beginning with a letter or digit. A run id names
// directories and files (transcripts, work trees, branches), so every
// command checks it here first: "..", "." or "../x" never reach a path.
// NewRunID's ids pass.
func CheckRunID(id string) error {
	if id == "" || len(id) > maxRunID {
		return fmt.Errorf("%w: %q: a run id has 1 to %d characters (as r-20260101-a1b2c3; see gaffer list)", ErrBadRunID, id, maxRunID)
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("%w: %q: a run id has letters, digits, '.', '_' and '-' only, and begins with a letter or digit (as r-20260101-a1b2c3; see gaffer list)", ErrBadRunID, id)
		}
	}
	return nil
}
