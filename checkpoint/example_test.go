package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

func ExampleNewMemory() {
	ctx := context.Background()
	s := checkpoint.NewMemory()
	defer s.Close()

	first := checkpoint.Checkpoint{RunID: "run-1", Seq: 1, Next: []string{"plan"}, Values: map[string][]byte{"n": []byte("1")}}
	if err := s.Put(ctx, first, checkpoint.PutOptions{}); err != nil {
		fmt.Println(err)
	}
	// A second writer that also thinks it is writing step 1 loses.
	err := s.Put(ctx, first, checkpoint.PutOptions{})
	fmt.Println(errors.Is(err, checkpoint.ErrConflict))

	cp, _ := s.Latest(ctx, "run-1")
	fmt.Println(cp.Seq, cp.Next, string(cp.Values["n"]))
	// Output:
	// true
	// 1 [plan] 1
}

func ExampleMemory_Acquire() {
	ctx := context.Background()
	// Pretend every process is alive, so only expiry frees a lease.
	s := checkpoint.NewMemory(checkpoint.MemoryProcessAlive(func(int) bool { return true }))
	defer s.Close()

	alice := checkpoint.Owner{ID: "alice-1", PID: 4242, Host: "alpha"}
	bob := checkpoint.Owner{ID: "bob-1", PID: 4343, Host: "alpha"}
	lease, _ := s.Acquire(ctx, "run-1", alice, time.Minute)

	_, err := s.Acquire(ctx, "run-1", bob, time.Minute)
	fmt.Println(err)

	// Writes carry the lease token; once the lease changes hands they fail.
	s.Release(ctx, lease)
	s.Acquire(ctx, "run-1", bob, time.Minute)
	err = s.Put(ctx, checkpoint.Checkpoint{RunID: "run-1", Seq: 1}, checkpoint.PutOptions{Fence: lease.Token})
	fmt.Println(errors.Is(err, checkpoint.ErrFenced))
	// Output:
	// run run-1 is held by pid 4242 on host alpha
	// true
}
