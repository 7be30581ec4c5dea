package host

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckRunID(t *testing.T) {
	for _, id := range []string{"r-1", "r-20260101-a1b2c3", NewRunID(time.Now()), "R_2.x", strings.Repeat("a", 64)} {
		if err := CheckRunID(id); err != nil {
			t.Errorf("CheckRunID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", "../../x", "a/b", "-r", ".hidden", "r 1", "r\x00", "é", strings.Repeat("a", 65)} {
		if err := CheckRunID(id); !errors.Is(err, ErrBadRunID) {
			t.Errorf("CheckRunID(%q) = %v, want ErrBadRunID", id, err)
		}
	}
}
