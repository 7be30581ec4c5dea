package checkpoint

import (
	"os"
	"testing"
)

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("this process does not count as alive")
	}
	if processAlive(1 << 30) {
		t.Fatal("pid 2^30 counts as alive")
	}
}
