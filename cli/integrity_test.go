package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/gaffer-dev/gaffer/host"
)

// storeHash hashes the names, modes and contents of every file under dir
// but Badger's LOCK file, which holds the pid of the last process to open
// the store.
func storeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "LOCK" {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h.Write([]byte(rel + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// wantExit8OneLine checks that a command refused with exit 8 and one line
// holding every one of want.
func wantExit8OneLine(t *testing.T, what, out string, code int, want ...string) {
	t.Helper()
	if code != ExitPrecondition || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("%s: exit %d, want %d with one line:\n%s", what, code, ExitPrecondition, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("%s: %q does not say %q", what, strings.TrimSpace(out), w)
		}
	}
}

// TestDamagedMemtableLogIsExit8 kills a run at its first phase commit,
// then garbles eight bytes in the middle of the store's memtable log.
// Badger alone would cut the log there and open: status would show an
// older checkpoint and resume would run the phase again from it. Every
// command must instead refuse with exit 8 and one line saying the store is
// damaged, naming the log, and leave the store's files as they were.
func TestDamagedMemtableLogIsExit8(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")
	p := startProc(t, bin, []string{"--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", "r-20260101-garble"}, "GAFFER_TEST_PAUSE_AFTER_COMMIT=30s")
	if !p.killAt("after-commit", 0) {
		out, code := p.wait()
		t.Fatalf("the run ended (exit %d) before its first commit\n%s", code, out)
	}
	mems, _ := filepath.Glob(filepath.Join(store, "*.mem"))
	if len(mems) != 1 {
		t.Fatalf("store has %d memtable logs, want 1", len(mems))
	}
	b, err := os.ReadFile(mems[0])
	if err != nil {
		t.Fatal(err)
	}
	end := len(strings.TrimRight(string(b), "\x00"))
	copy(b[end/2:], []byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04})
	if err := os.WriteFile(mems[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := storeHash(t, store)
	for _, cmd := range [][]string{{"status"}, {"history"}, {"resume"}} {
		out, code := gafferCmd(t, bin, append([]string{"--repo", dir}, cmd...)...)
		t.Logf("%s: exit %d: %s", cmd[0], code, strings.TrimSpace(out))
		wantExit8OneLine(t, cmd[0], out, code, "is damaged", filepath.Base(mems[0]), store)
		if storeHash(t, store) != before {
			t.Fatalf("%s changed the damaged store's files", cmd[0])
		}
	}
}

// TestCorruptRecordIsExit8 garbles the latest checkpoint record of a
// finished run with raw Badger. status and history then read a record that
// fails its checksum: exit 8 and one line saying the store is damaged,
// naming it and the fix (it was exit 1 without the fix).
func TestCorruptRecordIsExit8(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")
	if out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	db, err := badger.Open(badger.DefaultOptions(store).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{'c'}})
		var key, val []byte
		for it.Rewind(); it.Valid(); it.Next() {
			key = it.Item().KeyCopy(nil)
			if val, err = it.Item().ValueCopy(nil); err != nil {
				it.Close()
				return err
			}
		}
		it.Close()
		if key == nil {
			return errors.New("no checkpoint record")
		}
		val[len(val)/2] ^= 0xff
		return txn.Set(key, val)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"status", "history"} {
		out, code := gafferCmd(t, bin, "--repo", dir, cmd)
		t.Logf("%s: exit %d: %s", cmd, code, strings.TrimSpace(out))
		wantExit8OneLine(t, cmd, out, code, "is damaged", store, "restore it from a backup")
	}
}

// TestStoreThatIsAFileIsExit8 gives --store a file: exit 8 and one line
// naming it, and the file is left as it was (it was exit 1).
func TestStoreThatIsAFileIsExit8(t *testing.T) {
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	file := filepath.Join(t.TempDir(), "notes.txt")
	writeTestFile(t, file, "mine\n")
	for _, args := range [][]string{{"status"}, {"run", "--plan", plan, "--script", script, "--auto-approve"}} {
		out, code := gafferCmd(t, bin, append([]string{"--repo", dir, "--store", file}, args...)...)
		t.Logf("%s: exit %d: %s", args[0], code, strings.TrimSpace(out))
		wantExit8OneLine(t, args[0], out, code, file, "not a directory")
		if b, err := os.ReadFile(file); err != nil || string(b) != "mine\n" {
			t.Fatalf("%s: the file holds %q, %v", args[0], b, err)
		}
	}
}

// TestRefusedRunCreatesNoStore starts runs that are refused for their
// work tree (uncommitted changes; no commit at all): exit 8, and no store
// directory is made (an empty store was left behind).
func TestRefusedRunCreatesNoStore(t *testing.T) {
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	writeTestFile(t, filepath.Join(dir, "doc.go"), "package calc // changed\n")
	out, code := gafferCmd(t, bin, "--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve", "--in-place") // refused in place only
	wantExit8OneLine(t, "run on a dirty tree", out, code, "uncommitted changes")
	if _, err := os.Stat(filepath.Join(dir, ".git", "gaffer")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a run refused for a dirty tree made its store: %v", err)
	}

	empty := t.TempDir()
	gitOut(t, empty, "init", "-q", "-b", "main")
	out, code = gafferCmd(t, bin, "--repo", empty, "run", "--plan", plan, "--script", script, "--auto-approve")
	wantExit8OneLine(t, "run without a commit", out, code, "no commit")
	if _, err := os.Stat(filepath.Join(empty, ".git", "gaffer")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a run refused for a repository without a commit made its store: %v", err)
	}
}

// fillDisk writes a file in dir until its file system is full and returns
// what removes it.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{1 << 20, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err = f.Write(buf); err != nil {
				break
			}
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	return func() {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
}

// wantNoSpace checks that a command stopped with exit 1 and a last line
// saying the store's disk is full (not that the store is damaged), with
// no crash.
func wantNoSpace(t *testing.T, what, out string, code int, store string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if code != ExitFailure || !strings.HasPrefix(last, "gaffer: ") || !strings.Contains(last, "no space left on device") ||
		!strings.Contains(last, store) || !strings.Contains(last, "resume") || strings.Contains(out, "damaged") ||
		strings.Contains(out, "goroutine ") || strings.Contains(out, "SIGBUS") {
		t.Fatalf("%s on a full store disk: exit %d, want %d and a last line naming the store, 'no space left on device' and resume:\n%s",
			what, code, ExitFailure, out)
	}
}

// TestFullStoreDiskStopsForResume puts the store on a small tmpfs and
// fills it at each point where gaffer writes the store: when run, approve,
// resume and serve open it (status, which reads it read-only, still
// works), and in the middle of a run (at a phase commit, before
// its checkpoint). Badger writes its memtable log through a memory map, so
// gaffer used to die of SIGBUS with a goroutine dump; a full disk at open
// was reported as a damaged store. Each must stop with exit 1 and one line
// naming the store and "no space left on device"; once there is room,
// resume completes the run.
func TestFullStoreDiskStopsForResume(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	disk := tmpfs(t, "64m")
	store := filepath.Join(disk, "store")
	repo, aux := t.TempDir(), t.TempDir()
	gitRepo(t, repo, map[string]string{"README.md": "small\n"})
	plan, script := filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# Plan: two\n\n### Task 1: Write a\n- type: test\n- files: a.txt\n\n### Task 2: Write b\n- type: test\n- files: b.txt\n")
	writeTestFile(t, script, `developer:
  - phase: 1
    actions:
      - write: {path: a.txt, content: "a\n"}
    summary: wrote a
  - phase: 2
    actions:
      - write: {path: b.txt, content: "b\n"}
    summary: wrote b
reviewer:
  - {phase: 1, approved: true, comments: fine}
  - {phase: 2, approved: true, comments: fine}
`)
	g := []string{"--repo", repo, "--store", store}
	run := append(g, "run", "--plan", plan, "--script", script, "--run-id", "r-20260101-stfull")

	free := fillDisk(t, disk)
	out, code := gafferCmd(t, bin, run...)
	wantNoSpace(t, "run", out, code, store)
	free()

	if out, code := gafferCmd(t, bin, run...); code != ExitAwaitingApproval {
		t.Fatalf("run: exit %d, want %d\n%s", code, ExitAwaitingApproval, out)
	}
	free = fillDisk(t, disk)
	for _, cmd := range []string{"approve", "resume", "serve"} {
		out, code = gafferCmd(t, bin, append(g, cmd)...)
		wantNoSpace(t, cmd, out, code, store)
	}
	// status reads the store read-only: a full disk does not stop it.
	if out, code := gafferCmd(t, bin, append(g, "status")...); code != 0 || !strings.Contains(out, "awaiting_approval") {
		t.Errorf("status on a full store disk: exit %d, want 0 and the run\n%s", code, out)
	}
	free()

	p := startProc(t, bin, append(g, "approve"), "GAFFER_TEST_PAUSE_AFTER_COMMIT=2s")
	select {
	case <-p.commit:
	case <-p.done:
		out, code := p.wait()
		t.Fatalf("approve ended (exit %d) before its first commit\n%s", code, out)
	}
	free = fillDisk(t, disk)
	out, code = p.wait()
	t.Logf("approve, disk filled at the first commit:\n%s", out)
	wantNoSpace(t, "approve (disk full in the run)", out, code, store)
	free()

	if out, code := gafferCmd(t, bin, append(g, "resume")...); code != 0 {
		t.Fatalf("resume once the disk has room: exit %d\n%s", code, out)
	}
	if v := procStatusJSON(t, bin, g...); v.Status != "completed" || len(v.Phases) != 2 {
		t.Fatalf("after resume: status %q, %d phases", v.Status, len(v.Phases))
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if got := gitOut(t, repo, "log", "--format=%s", runRev(t, repo), "--", f); !strings.Contains(got, "phase") || strings.Count(got, "\n") != 0 {
			t.Errorf("%s is in commits %q, want one phase commit", f, got)
		}
	}
}

// copyTree copies the regular files of src (one level) into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if !en.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, en.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLostCheckpointsAreExit8 keeps a copy of a run's store from its first
// phase commit, lets the run complete, and puts the old copy back: the
// store has lost the checkpoints of phases 2 to 4, whose commits are in
// the branch. status, resume and cancel must refuse with exit 8 and one
// line naming the lost phase and the fix, instead of showing phase 1 and
// running phases 2 to 4 again. In place: a run in its own work tree that
// ended has no work tree left, and the check reads the user's checkout.
func TestLostCheckpointsAreExit8(t *testing.T) {
	t.Parallel()
	for _, m := range runModes {
		t.Run(m.name, func(t *testing.T) { testLostCheckpoints(t, m) })
	}
}

// testLostCheckpoints: in the run's own work tree the run has ended (its
// tree is gone) when the old store comes back, so its branch is the
// witness, and the fix names the branch.
func testLostCheckpoints(t *testing.T, m runMode) {
	bin := gafferBinary(t)
	dir, plan, script := demoRepo(t)
	store := filepath.Join(dir, ".git", "gaffer")
	const runID = "r-20260101-lostcp"
	p := startProc(t, bin, m.args("--repo", dir, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", runID), "GAFFER_TEST_PAUSE_AFTER_COMMIT=30s")
	if !p.killAt("after-commit", 0) {
		out, code := p.wait()
		t.Fatalf("the run ended (exit %d) before its first commit\n%s", code, out)
	}
	old := filepath.Join(t.TempDir(), "old-store")
	copyTree(t, store, old)
	if out, code := gafferCmd(t, bin, "--repo", dir, "resume"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	copyTree(t, old, store)
	untouched := m.untouched(t, dir)
	tip := gitOut(t, dir, "rev-parse", m.rev(runID))
	fix := "git reset --keep"
	if !m.inPlace {
		fix = "git branch -f " + host.RunBranch(runID)
	}
	for _, cmd := range []string{"status", "resume", "cancel"} {
		out, code := gafferCmd(t, bin, "--repo", dir, cmd)
		t.Logf("%s: exit %d: %s", cmd, code, strings.TrimSpace(out))
		wantExit8OneLine(t, cmd, out, code, "lost checkpoints", "phase 2", fix)
	}
	if got := gitOut(t, dir, "rev-parse", m.rev(runID)); got != tip {
		t.Fatalf("%s moved from %s to %s", m.rev(runID), tip, got)
	}
	untouched("after the refusals")
}
