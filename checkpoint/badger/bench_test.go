package badger

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// loopState is the record a tight loop writes: a counter that changes every
// step and a 2 KB payload that never does.
func loopCheckpoint(run string, seq uint64, payload []byte) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		RunID: run, Seq: seq, Parent: seq - 1, Step: int(seq),
		Ran: []string{"step"}, Next: []string{"step"},
		Values: map[string][]byte{
			"counter": strconv.AppendUint(nil, seq, 10),
			"payload": payload,
		},
		Status: "running",
		Time:   time.Unix(1_700_000_000, 0).Add(time.Duration(seq) * time.Millisecond),
	}
}

func loopPayload() []byte {
	return append([]byte{'"'}, append(bytes.Repeat([]byte("x"), 2046), '"')...)
}

func BenchmarkRawFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := bytes.Repeat([]byte("x"), 2048)
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	payload := loopPayload()
	for _, tc := range []struct {
		name string
		open func(b *testing.B) checkpoint.Store
		sync bool
	}{
		{"store=memory", func(b *testing.B) checkpoint.Store { return checkpoint.NewMemory() }, false},
		{"store=badger-async", openBenchBadger, false},
		{"store=badger-sync", openBenchBadger, true},
		{"store=badger-syncwrites", func(b *testing.B) checkpoint.Store {
			s, err := Open(b.TempDir(), Options{SyncWrites: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := tc.open(b)
			defer s.Close()
			seq := uint64(0)
			for b.Loop() {
				seq++
				if err := s.Put(ctx, loopCheckpoint("run", seq, payload), checkpoint.PutOptions{Sync: tc.sync}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func openBenchBadger(b *testing.B) checkpoint.Store {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// dirBytes sums the sizes of the files in dir.
func dirBytes(t testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// diskPerStep writes steps loop checkpoints, closes the store and returns
// the bytes on disk per checkpoint.
func diskPerStep(t testing.TB, steps int) float64 {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload := loopPayload()
	for seq := uint64(1); seq <= uint64(steps); seq++ {
		if err := s.Put(ctx, loopCheckpoint("run", seq, payload), checkpoint.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return float64(dirBytes(t, dir)) / float64(steps)
}

// BenchmarkDiskPerStep reports bytes on disk per checkpoint after 10,000
// loop checkpoints. It writes the same 10,000 whatever b.N is; only the
// bytes/step metric is meaningful.
func BenchmarkDiskPerStep(b *testing.B) {
	b.ReportMetric(diskPerStep(b, 10_000), "bytes/step")
}

// TestDiskPerStep holds the store to its budget: a loop that changes only
// a counter next to a 2 KB payload costs at most 300 bytes per step.
func TestDiskPerStep(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 checkpoints")
	}
	if per := diskPerStep(t, 10_000); per > 300 {
		t.Fatalf("%.0f bytes on disk per step, budget 300", per)
	} else {
		t.Logf("%.0f bytes on disk per step", per)
	}
}
