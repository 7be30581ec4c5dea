package postgres_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/checkpoint/postgres"
)

// Open a store in a shared database, take a run's lease and write its first
// checkpoint fenced by the lease's token.
func ExampleOpen() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://gaffer@db.example.com/gaffer", postgres.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	lease, err := s.Acquire(ctx, "run-1", checkpoint.Owner{ID: "host-a/1234", PID: 1234, Host: "host-a"}, 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	cp := checkpoint.Checkpoint{RunID: "run-1", Seq: 1, Next: []string{"plan"}, Time: time.Now()}
	if err := s.Put(ctx, cp, checkpoint.PutOptions{Sync: true, Fence: lease.Token}); err != nil {
		fmt.Println(err)
	}
}
