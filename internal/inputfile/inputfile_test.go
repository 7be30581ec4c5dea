package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(small, 5, Options{}); err != nil || string(b) != "hello" {
		t.Fatalf("Read(small) = %q, %v", b, err)
	}
	if _, err := Read(small, 4, Options{}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "over the limit of 4 bytes") {
		t.Fatalf("Read over the limit: %v", err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{"/dev/zero": "a character device", link: "a character device", dir: "a directory", fifo: "a FIFO"} {
		_, err := Read(path, 1<<20, Options{})
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), what) {
			t.Errorf("Read(%s) = %v, want ErrNotRegular naming %s", path, err, what)
		}
	}
	// A pipe, taken: bounded too.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		big := make([]byte, 1<<16)
		for {
			if _, err := w.Write(big); err != nil {
				return
			}
		}
	}()
	defer w.Close()
	defer r.Close()
	path := "/proc/self/fd/" + itoa(int(r.Fd()))
	if _, err := Read(path, 1<<20, Options{Pipes: true}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read(endless pipe) = %v, want ErrTooLarge", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 16 << 20: "16 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
