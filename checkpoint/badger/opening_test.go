package badger

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// TestOpenKilledBeforeTheLogHasItsSize leaves what a process killed inside
// Badger's open leaves: the marker of an open that never finished and the
// new memtable log Badger had created but not yet sized (zero bytes). The
// store opens with every checkpoint, and the marker is gone after. So does
// a store whose close was killed between Badger's cutting a flushed log
// and removing it. A log the opening marker lists, cut to nothing, is still
// damage: it held records; so is an empty log no marker explains.
func TestOpenKilledBeforeTheLogHasItsSize(t *testing.T) {
	t.Run("new empty log", func(t *testing.T) {
		dir, _ := killedStore(t, 4)
		markLogs(dir, openingFile)
		writeFile(t, filepath.Join(dir, "00002.mem"), nil)
		wantLatest(t, dir, 4, "a kill inside the previous open")
		if _, err := os.Stat(filepath.Join(dir, openingFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the open left its marker behind: %v", err)
		}
	})
	t.Run("listed log cut to nothing", func(t *testing.T) {
		dir, mem := killedStore(t, 4)
		markLogs(dir, openingFile)
		if err := os.Truncate(mem, 0); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir, Options{})
		if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(mem)) {
			t.Fatalf("open = %v, want the cut %s refused as damage", err, filepath.Base(mem))
		}
	})
	t.Run("listed log emptied by a close", func(t *testing.T) {
		dir, mem := killedStore(t, 4)
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil { // flushes the log to a table, then deletes it
			t.Fatal(err)
		}
		// A close killed between Badger's cutting the log and removing it.
		writeFile(t, filepath.Join(dir, closingFile), []byte(filepath.Base(mem)+" 65536\n"))
		writeFile(t, mem, nil)
		wantLatest(t, dir, 4, "a kill inside the previous close")
	})
	t.Run("header-only value log emptied by an open", func(t *testing.T) {
		dir, _ := killedStore(t, 4)
		// Badger deletes a value log holding only its header when it
		// opens the store; this open was killed between the cut and the
		// removal.
		vlog := filepath.Join(dir, "000009.vlog")
		writeFile(t, filepath.Join(dir, openingFile), []byte("000009.vlog 20\n"))
		writeFile(t, vlog, nil)
		wantLatest(t, dir, 4, "a kill inside the previous open")
	})
	t.Run("empty log without a marker", func(t *testing.T) {
		dir, _ := killedStore(t, 4)
		writeFile(t, filepath.Join(dir, "00002.mem"), nil)
		if _, err := Open(dir, Options{}); !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Fatalf("open = %v, want an empty log no unfinished open explains refused", err)
		}
	})
}

const reopenHelperEnv = "GAFFER_CHECKPOINT_REOPEN_DIR"

// TestReopenHelper opens the store, writes the next checkpoint, says so
// and closes it, over and over, until it is killed.
func TestReopenHelper(t *testing.T) {
	dir := os.Getenv(reopenHelperEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestOpenSurvivesKillsAtAnyMoment")
	}
	for {
		s, err := Open(dir, Options{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "open: %v\n", err)
			os.Exit(1)
		}
		seq := uint64(1)
		if cp, err := s.Latest(bg, "r"); err == nil {
			seq = cp.Seq + 1
		}
		if err := s.Put(bg, loopCheckpoint("r", seq, loopPayload()), checkpoint.PutOptions{Sync: true}); err != nil {
			fmt.Fprintf(os.Stderr, "put %d: %v\n", seq, err)
			os.Exit(1)
		}
		fmt.Printf("ack %d\n", seq)
		if err := s.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "close: %v\n", err)
			os.Exit(1)
		}
	}
}

// TestOpenSurvivesKillsAtAnyMoment kills (SIGKILL) a process that opens,
// writes and closes one store in a loop, at random moments — inside open
// and close as often as between them — and reopens the store each time:
// it always opens, with every checkpoint the process acknowledged.
func TestOpenSurvivesKillsAtAnyMoment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(20261128, 1))
	var acked uint64
	for kill := range 12 {
		cmd, stdout, stderr := startHelper(t, "TestReopenHelper", reopenHelperEnv, dir)
		// Let it through a few cycles, then kill it a random time later.
		sc := bufio.NewScanner(stdout)
		for n := 0; n < 3 && sc.Scan(); {
			if seq, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				v, _ := strconv.ParseUint(seq, 10, 64)
				acked, n = max(acked, v), n+1
			}
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			if seq, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				v, _ := strconv.ParseUint(seq, 10, 64)
				acked = max(acked, v)
			}
		}
		if err := cmd.Wait(); err == nil || strings.Contains(stderr.String(), "open:") {
			t.Fatalf("kill %d: the helper ended on its own (%v): %s", kill, err, stderr.String())
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("kill %d: reopen: %v", kill, err)
		}
		cp, err := s.Latest(bg, "r")
		s.Close()
		if err != nil || cp.Seq < acked {
			t.Fatalf("kill %d: latest %d, %v; the helper acknowledged %d", kill, cp.Seq, err, acked)
		}
	}
	t.Logf("12 kills, %d checkpoints acknowledged, the store opened after each", acked)
}
