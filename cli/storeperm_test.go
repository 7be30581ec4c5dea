package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallRun makes a repository with a completed one-task run in its store
// (.git/gaffer) and returns the repository and the store.
func smallRun(t *testing.T, bin string) (repo, store string) {
	t.Helper()
	repo, aux := t.TempDir(), t.TempDir()
	gitRepo(t, repo, map[string]string{"README.md": "small\n"})
	plan, script := filepath.Join(aux, "plan.md"), filepath.Join(aux, "script.yaml")
	writeTestFile(t, plan, "# Plan: one\n\n### Task 1: Write a\n\nWrite a.\n")
	writeTestFile(t, script, "developer:\n  - phase: 1\n    actions:\n      - write: {path: a.txt, content: \"a\\n\"}\n    summary: wrote a\nreviewer: []\n")
	if out, code := gafferCmd(t, bin, "--repo", repo, "run", "--plan", plan, "--script", script, "--auto-approve",
		"--run-id", "r-20260101-perms1"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	return repo, filepath.Join(repo, ".git", "gaffer")
}

// TestReadOnlyStoreIsNotDamaged puts a store on a read-only bind mount
// (a backup, a snapshot). Badger cannot write its LOCK file there and says
// so in a flattened string; gaffer called that a damaged store and told
// the user to move it aside, the one advice that loses it. It is a disk
// the machine will not write: a command that writes (resume) exits 1,
// naming the read-only file system, never "damaged"; the commands that
// read (status, history) open the store read-only and show the run.
func TestReadOnlyStoreIsNotDamaged(t *testing.T) {
	t.Parallel()
	bin := gafferBinary(t)
	repo, store := smallRun(t, bin)
	if out, err := exec.Command("mount", "--bind", store, store).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", store).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", store, err, out)
		}
	})
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", store).CombinedOutput(); err != nil {
		t.Fatalf("remount read-only: %v: %s", err, out)
	}
	for _, cmd := range []string{"status", "history"} {
		if out, code := gafferCmd(t, bin, "--repo", repo, cmd); code != 0 || !strings.Contains(out, "completed") {
			t.Errorf("%s on a read-only store: exit %d, want 0 and the run\n%s", cmd, code, out)
		}
	}
	for _, cmd := range []string{"resume"} {
		out, code := gafferCmd(t, bin, "--repo", repo, cmd)
		t.Logf("%s: exit %d: %s", cmd, code, strings.TrimSpace(out))
		if code != ExitFailure || strings.Contains(out, "damaged") || strings.Contains(out, "move it aside") ||
			!strings.Contains(out, "read-only file system") || !strings.Contains(out, store) {
			t.Errorf("%s on a read-only store: exit %d, want %d naming the store and its read-only file system, not damage:\n%s",
				cmd, code, ExitFailure, out)
		}
	}
}

// TestUnreadableStoreFileIsNotDamaged leaves, in a user's store, a value
// log that user cannot read (root made it, 0600). gaffer called the store
// damaged and told the user to move it aside; it is a permission problem:
// exit 1 naming the file and "permission denied".
func TestUnreadableStoreFileIsNotDamaged(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	bin := gafferBinary(t)
	repo, store := smallRun(t, bin)
	const uid = "54322"
	// The other user enters the test's directories up to the temporary
	// directory, which is not the test's to change: chmod-ing every parent
	// up to / once left /tmp 0755, not 1777, for the rest of the machine.
	tmp := filepath.Clean(os.TempDir())
	for _, dir := range []string{filepath.Dir(bin), filepath.Dir(repo)} {
		for d := dir; strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out, err := exec.Command("chown", "-R", uid+":"+uid, repo).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	rootsLog := filepath.Join(store, "000099.vlog")
	if err := os.WriteFile(rootsLog, make([]byte, 20), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid="+uid, "--regid="+uid, "--clear-groups", bin, "--repo", repo, "status")
	cmd.Env = append(os.Environ(), "HOME="+repo, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	b, err := cmd.CombinedOutput()
	out, code := string(b), exitCodeOf(err)
	t.Logf("status as uid %s: exit %d: %s", uid, code, strings.TrimSpace(out))
	if code != ExitFailure || strings.Contains(out, "damaged") || strings.Contains(out, "move it aside") ||
		!strings.Contains(out, "permission denied") || !strings.Contains(out, "000099.vlog") {
		t.Errorf("status with a value log its user cannot read: exit %d, want %d naming the file and 'permission denied', not damage:\n%s",
			code, ExitFailure, out)
	}
}
