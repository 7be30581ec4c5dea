package badger

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// fakeEnv is a settable clock and process table for lease tests.
type fakeEnv struct {
	mu   sync.Mutex
	now  time.Time
	dead map[int]bool
}

func (f *fakeEnv) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeEnv) Alive(pid int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.dead[pid]
}

func (f *fakeEnv) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeEnv) kill(pid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead[pid] = true
}

// leaseStores opens each store kind with the fake clock and process table.
func leaseStores(t *testing.T, env *fakeEnv) map[string]checkpoint.Store {
	b, err := Open(t.TempDir(), Options{Now: env.Now, ProcessAlive: env.Alive})
	if err != nil {
		t.Fatal(err)
	}
	m := checkpoint.NewMemory(checkpoint.MemoryClock(env.Now), checkpoint.MemoryProcessAlive(env.Alive))
	t.Cleanup(func() { b.Close(); m.Close() })
	return map[string]checkpoint.Store{"memory": m, "badger": b}
}

func TestLeaseInjectedClockAndProcesses(t *testing.T) {
	for name := range map[string]bool{"memory": true, "badger": true} {
		t.Run(name, func(t *testing.T) {
			env := &fakeEnv{now: time.Unix(1_000_000, 0), dead: map[int]bool{}}
			s := leaseStores(t, env)[name]
			a := checkpoint.Owner{ID: "a", PID: 100, Host: "h1"}
			b := checkpoint.Owner{ID: "b", PID: 200, Host: "h1"}
			c := checkpoint.Owner{ID: "c", PID: 300, Host: "h2"}

			la, err := s.Acquire(bg, "r", a, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if want := env.Now().Add(time.Minute); !la.Expires.Equal(want) {
				t.Fatalf("Expires = %v, want %v", la.Expires, want)
			}
			env.advance(59 * time.Second)
			var held *checkpoint.LeaseHeldError
			if _, err := s.Acquire(bg, "r", c, time.Minute); !errors.As(err, &held) {
				t.Fatalf("before expiry: %v, want *LeaseHeldError", err)
			}
			// Renewal moves the expiry from now.
			if la, err = s.Renew(bg, la, time.Minute); err != nil {
				t.Fatal(err)
			}
			env.advance(59 * time.Second)
			if _, err := s.Acquire(bg, "r", c, time.Minute); !errors.As(err, &held) {
				t.Fatalf("before renewed expiry: %v, want *LeaseHeldError", err)
			}
			env.advance(time.Second) // exactly at expiry: free
			lc, err := s.Acquire(bg, "r", c, time.Minute)
			if err != nil || lc.Token <= la.Token {
				t.Fatalf("at expiry: %+v, %v; want a greater token than %d", lc, err, la.Token)
			}
			if _, err := s.Renew(bg, la, time.Minute); !errors.Is(err, checkpoint.ErrFenced) {
				t.Fatalf("Renew of the expired and taken lease: %v, want ErrFenced", err)
			}

			// Dead holder on the same host: taken over at once.
			lb, err := s.Acquire(bg, "r2", b, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(bg, "r2", a, time.Hour); !errors.As(err, &held) {
				t.Fatalf("live holder: %v, want *LeaseHeldError", err)
			}
			env.kill(200)
			la2, err := s.Acquire(bg, "r2", a, time.Hour)
			if err != nil || la2.Token <= lb.Token {
				t.Fatalf("dead holder: %+v, %v; want takeover", la2, err)
			}
			// Dead holder on another host: its pid means nothing here.
			env.kill(300)
			if _, err := s.Acquire(bg, "r3", c, time.Hour); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Acquire(bg, "r3", a, time.Hour); !errors.As(err, &held) {
				t.Fatalf("dead pid on another host: %v, want *LeaseHeldError", err)
			}
			if _, err := s.Acquire(bg, "r", c, 0); !errors.Is(err, checkpoint.ErrInvalid) {
				t.Fatalf("zero ttl: %v, want ErrInvalid", err)
			}
			if _, err := s.Acquire(bg, "r9", checkpoint.Owner{}, time.Hour); !errors.Is(err, checkpoint.ErrInvalid) {
				t.Fatalf("owner without ID: %v, want ErrInvalid", err)
			}
		})
	}
}

// TestTokensIncreaseAcrossReopenAndBlocks takes more tokens than one
// reservation block holds, releasing each lease (so no lease record keeps
// the last token), then reopens the store: every token is greater than all
// before it, including one handed out for a run whose old lease is gone.
func TestTokensIncreaseAcrossReopenAndBlocks(t *testing.T) {
	dir := t.TempDir()
	me := checkpoint.Owner{ID: "me", PID: os.Getpid(), Host: "h"}
	var last uint64
	for round := range 2 {
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range tokenBlock + 10 {
			l, err := s.Acquire(bg, "r", checkpoint.Owner{ID: fmt.Sprintf("o%d.%d", round, i), PID: os.Getpid(), Host: "h"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if l.Token <= last {
				t.Fatalf("round %d, lease %d: token %d is not greater than %d", round, i, l.Token, last)
			}
			last = l.Token
			if err := s.Release(bg, l); err != nil {
				t.Fatal(err)
			}
		}
		// A lease left held over the reopen keeps fencing its run.
		held, err := s.Acquire(bg, "kept", me, time.Hour)
		if err != nil || held.Token <= last {
			t.Fatalf("Acquire = %+v, %v; want a token over %d", held, err, last)
		}
		last = held.Token
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(bg, checkpoint.Checkpoint{RunID: "kept", Seq: uint64(round + 1), Parent: uint64(round)}, checkpoint.PutOptions{Fence: held.Token}); err != nil {
			t.Fatalf("Put with the lease held over the reopen: %v", err)
		}
		if err := s.Release(bg, held); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
