package hoststore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// noRuns is a Setup that starts nothing: these tests open stores.
type noRuns struct{}

func (noRuns) Prepare(context.Context, *workspace.Repo, host.RunSpec) (host.Prepared, error) {
	return nil, errors.New("no runs here")
}

func (noRuns) Drivers(host.DriverEnv) nodes.DriverFactory {
	return func(agent.Role, state.RunConfig) (agent.Driver, error) { return nil, errors.New("no drivers here") }
}

func (noRuns) CheckKeys(state.RunConfig) error { return nil }

func newRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if _, err := workspace.Init(dir, "main"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A store directory is its user's alone, whatever the umask: the
// directory 0700 and its files 0600, after Open and after Close.
func TestOpenKeepsTheStorePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	store := filepath.Join(t.TempDir(), "store")
	h, err := Open(t.Context(), Config{Repo: newRepo(t), Store: store, Config: host.Config{Setup: noRuns{}}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		fi, err := os.Stat(store)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: the store directory is %v, %v; want 0700", when, fi.Mode().Perm(), err)
		}
		ents, _ := os.ReadDir(store)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && e.Type().IsRegular() && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", when, e.Name(), fi.Mode().Perm())
			}
		}
	}
	check("open")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}

// A store another Host holds is refused as held, naming the process; a
// repository that is none is refused before any store is made.
func TestOpenRefusals(t *testing.T) {
	repo := newRepo(t)
	store := filepath.Join(t.TempDir(), "store")
	cfg := Config{Repo: repo, Store: store, Config: host.Config{Setup: noRuns{}}}
	h, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = Open(t.Context(), cfg)
	if host.CodeOf(err) != host.Held || !strings.Contains(err.Error(), fmt.Sprintf("is in use by pid %d on host", os.Getpid())) {
		t.Fatalf("a held store: %v (%s), want held by this process", err, host.CodeOf(err))
	}

	other := filepath.Join(t.TempDir(), "store")
	_, err = Open(t.Context(), Config{Repo: t.TempDir(), Store: other, Config: host.Config{Setup: noRuns{}}})
	if host.CodeOf(err) != host.Refused || !strings.Contains(err.Error(), "open repository") {
		t.Fatalf("no repository: %v (%s), want refused", err, host.CodeOf(err))
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the store of a refused open was made: %v", err)
	}
}
