package cli

import (
	"bytes"
	"testing"
	"time"
)

// TestIOReadsItsOwnEnvironment: what the commands read of the environment
// comes from IO.Getenv, not the process's: a terminal is drawn on unless
// that environment says TERM=dumb or NO_COLOR, and the pager follows it.
func TestIOReadsItsOwnEnvironment(t *testing.T) {
	t.Parallel()
	term := func(env map[string]string) IO {
		var buf bytes.Buffer
		return IO{Out: &buf, Err: &buf, Terminal: func() bool { return true }, Getenv: envWith(env)}
	}
	if term(map[string]string{"TERM": "xterm", "NO_COLOR": ""}).live().screen == nil {
		t.Error("TERM=xterm: no screen drawn on")
	}
	for _, env := range []map[string]string{{"TERM": "dumb", "NO_COLOR": ""}, {"TERM": "xterm", "NO_COLOR": "1"}} {
		o := term(env)
		if o.live().screen != nil {
			t.Errorf("%v: a screen drawn on, want plain lines", env)
		}
		if _, ok := pagerFor(o.getenv, func(string) (string, error) { return "/bin/less", nil }); ok {
			t.Errorf("%v: a pager, want plain text", env)
		}
	}
	if got := (IO{Getenv: func(string) string { return "1" }}).keyenv("GAFFER_TEST_HOOK_URL"); got != "1" {
		t.Errorf("keyenv without keys = %q, want the environment's", got)
	}
	if !reproducibleDates(term(map[string]string{"GAFFER_REPRODUCIBLE_DATES": "1"}).getenv) {
		t.Error("GAFFER_REPRODUCIBLE_DATES=1 in IO's environment: dates not reproducible")
	}
}

// TestHooksComeFromIO: the kill tests' pauses are IO.Hooks: unset, no
// hook is made; set, each announces its moment on Out.
func TestHooksComeFromIO(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	none := IO{Out: &buf}
	if afterCommitHook(none) != nil || afterPushHook(none) != nil || beforeNotifyHook(none) != nil || afterRestoreHook(none) != nil {
		t.Error("a hook without IO.Hooks")
	}
	set := IO{Out: &buf, Hooks: TestHooks{AfterCommit: time.Millisecond, AfterPush: time.Millisecond, BeforeNotify: time.Millisecond, AfterRestore: time.Millisecond}}
	afterCommitHook(set)("phase 1")
	afterPushHook(set)("abc123")
	afterRestoreHook(set)()
	want := "gaffer-test: committed phase 1\ngaffer-test: pushed abc123\ngaffer-test: restored the user's changes\n"
	if buf.String() != want || beforeNotifyHook(set) == nil {
		t.Errorf("hooks wrote %q, want %q", buf.String(), want)
	}
}
