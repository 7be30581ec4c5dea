package workspace

import (
	"errors"
	"os"
	"testing"
)

func TestLockWorkTreeIsExclusiveAndNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.LockWorkTree("run-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.LockWorkTree("run-2")
	var held *WorkTreeHeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrWorkTreeHeld) {
		t.Fatalf("second lock: %v, want a *WorkTreeHeldError", err)
	}
	host, _ := os.Hostname()
	if held.Holder != (Holder{PID: os.Getpid(), Host: host, Run: "run-1"}) {
		t.Fatalf("holder %+v", held.Holder)
	}
	l.Unlock()
	l.Unlock()
	l2, err := r.LockWorkTree("run-2")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
}
