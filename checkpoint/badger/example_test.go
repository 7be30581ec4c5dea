package badger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/badger"
)

func ExampleOpen() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "gaffer-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "store")

	s, err := badger.Open(dir, badger.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for seq := uint64(1); seq <= 3; seq++ {
		cp := checkpoint.Checkpoint{RunID: "run-1", Seq: seq, Parent: seq - 1, Status: "running",
			Values: map[string][]byte{"counter": fmt.Append(nil, seq)}}
		if err := s.Put(ctx, cp, checkpoint.PutOptions{Sync: true}); err != nil {
			fmt.Println(err)
		}
	}
	// The directory is locked while the store is open.
	_, err = badger.Open(dir, badger.Options{})
	fmt.Println(errors.Is(err, checkpoint.ErrLocked))
	s.Close()

	s, _ = badger.Open(dir, badger.Options{})
	defer s.Close()
	list, _ := s.List(ctx, "run-1", checkpoint.ListOptions{Limit: 2})
	for _, cp := range list {
		fmt.Println(cp.Seq, string(cp.Values["counter"]))
	}
	// Output:
	// true
	// 3 3
	// 2 2
}
