package badger

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestGroupCommitSharesOneFlush holds the store's first flush open while 16
// other goroutines each Put a checkpoint with Sync: none of them returns
// while that flush (which started before their commits) runs, and once it
// ends one more flush covers all 16, after which they all return.
func TestGroupCommitSharesOneFlush(t *testing.T) {
	const writers = 16
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var flushes atomic.Int32
	var secondDone atomic.Bool
	started, release := make(chan struct{}), make(chan struct{})
	s.syncer.flush = func(full bool) error {
		n := flushes.Add(1)
		if n == 1 {
			close(started)
			<-release
		}
		err := s.flushStore(full)
		if n == 2 {
			secondDone.Store(true)
		}
		return err
	}
	sync1 := checkpoint.PutOptions{Sync: true}
	first := make(chan error, 1)
	go func() { first <- s.Put(bg, loopCheckpoint("lead", 1, loopPayload()), sync1) }()
	<-started

	var returned, early atomic.Int32
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			errs[i] = s.Put(bg, loopCheckpoint(fmt.Sprintf("w%d", i), 1, loopPayload()), sync1)
			if !secondDone.Load() {
				early.Add(1)
			}
			returned.Add(1)
		})
	}
	// Wait until every writer has committed and waits for a flush (or, if
	// writers do not wait for each other, has returned).
	for s.syncer.waiting() < writers && returned.Load() < writers {
		time.Sleep(time.Millisecond)
	}
	if n := returned.Load(); n != 0 {
		t.Errorf("%d writers returned while the first flush still ran: each flushed on its own instead of waiting to share the next flush", n)
	}
	if n := flushes.Load(); n != 1 {
		t.Errorf("%d flushes ran at once, want 1", n)
	}
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if n := flushes.Load(); n != 2 {
		t.Errorf("%d flushes for 1+%d concurrent writers, want 2", n, writers)
	}
	if n := early.Load(); n != 0 {
		t.Errorf("%d writers returned before the flush covering their commit finished", n)
	}
}

// TestGroupCommitFlushErrorReachesEveryMember fails a shared flush: every
// writer it covered gets the error, and the next flush is tried afresh.
func TestGroupCommitFlushErrorReachesEveryMember(t *testing.T) {
	var g groupSync
	boom := fmt.Errorf("disk gone")
	started, release := make(chan struct{}), make(chan struct{})
	calls := 0
	flush := func(bool) error {
		calls++
		switch calls {
		case 1:
			close(started)
			<-release
			return nil
		case 2:
			return boom
		}
		return nil
	}
	go g.wait(false, flush)
	<-started
	const members = 5
	errs := make(chan error, members)
	for range members {
		go func() { errs <- g.wait(false, flush) }()
	}
	for g.waiting() < members {
		time.Sleep(time.Millisecond)
	}
	close(release)
	for range members {
		if err := <-errs; err != boom {
			t.Fatalf("member of the failed flush got %v, want %v", err, boom)
		}
	}
	if err := g.wait(false, flush); err != nil || calls != 3 {
		t.Fatalf("next wait = %v after %d flushes, want a fresh successful flush", err, calls)
	}
}

// floodHelperEnv names the store directory when the test binary runs as
// the flood helper: floodWriters goroutines Put checkpoints with Sync to
// their own runs as fast as they can and print "ack RUN SEQ" after each
// Put returns, until the process is killed.
const floodHelperEnv = "GAFFER_CHECKPOINT_FLOOD_DIR"

const floodWriters = 32

func TestGroupCommitFloodHelper(t *testing.T) {
	dir := os.Getenv(floodHelperEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestGroupCommitSurvivesKill")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range floodWriters {
		wg.Go(func() {
			run := fmt.Sprintf("flood%d", w)
			for seq := uint64(1); ; seq++ {
				if err := s.Put(bg, loopCheckpoint(run, seq, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
					fmt.Fprintf(os.Stderr, "put %s %d: %v\n", run, seq, err)
					os.Exit(1)
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "ack %s %d\n", run, seq)
				out.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestGroupCommitSurvivesKill kills (SIGKILL) a child process in the middle
// of a flood of concurrent Sync Puts, then reopens its store: every
// checkpoint the child acknowledged is there, intact.
func TestGroupCommitSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	dir := t.TempDir()
	cmd, stdout, stderr := startHelper(t, "TestGroupCommitFloodHelper", floodHelperEnv, dir)
	acked := make(map[string]uint64)
	lines, killed := 0, false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ack" {
			continue // test framework output, or a line cut by the kill
		}
		seq, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		acked[f[1]] = max(acked[f[1]], seq)
		if lines++; lines == 2000 && !killed {
			killed = true
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := cmd.Wait()
	if !killed {
		t.Fatalf("the helper stopped after %d acks: %v\n%s", lines, err, stderr.String())
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer s.Close()
	if len(acked) < floodWriters/2 {
		t.Fatalf("only %d of %d writers acknowledged anything", len(acked), floodWriters)
	}
	for run, seq := range acked {
		got, err := s.Get(bg, run, seq)
		if err != nil {
			t.Errorf("%s seq %d was acknowledged, then: %v", run, seq, err)
			continue
		}
		want := loopCheckpoint(run, seq, loopPayload())
		if string(got.Values["counter"]) != string(want.Values["counter"]) || string(got.Values["payload"]) != string(want.Values["payload"]) {
			t.Errorf("%s seq %d: values differ from what was written", run, seq)
		}
		latest, err := s.Latest(bg, run)
		if err != nil || latest.Seq < seq {
			t.Errorf("%s: Latest = seq %d, %v; want at least the acknowledged %d", run, latest.Seq, err, seq)
		}
	}
	t.Logf("%d acknowledged checkpoints over %d runs all present after SIGKILL", lines, len(acked))
}

// TestGroupCommitFullWhenAnyMemberNeedsIt batches a writer that put a
// value in Badger's value log with writers that did not: the shared flush
// is a full one, and the batch after it is not.
func TestGroupCommitFullWhenAnyMemberNeedsIt(t *testing.T) {
	var g groupSync
	started, release := make(chan struct{}), make(chan struct{})
	var fulls []bool
	flush := func(full bool) error {
		fulls = append(fulls, full)
		if len(fulls) == 1 {
			close(started)
			<-release
		}
		return nil
	}
	go g.wait(false, flush)
	<-started
	done := make(chan error, 3)
	for _, full := range []bool{false, true, false} {
		go func() { done <- g.wait(full, flush) }()
	}
	for g.waiting() < 3 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := g.wait(false, flush); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true, false}; fmt.Sprint(fulls) != fmt.Sprint(want) {
		t.Fatalf("flushes were full = %v, want %v", fulls, want)
	}
}
