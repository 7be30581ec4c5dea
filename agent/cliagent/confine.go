package cliagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
)

// confinement returns the rules to confine a session's process with, or nil
// when it runs unconfined (then Options.Warn has been told why, once).
func (d *Driver) confinement() *landlock.Rules {
	if d.opts.Confine == agent.ConfineOff {
		return nil
	}
	rules, why := landlock.Available()
	if rules == nil {
		d.warn.Do(func() {
			if d.opts.Warn != nil {
				d.opts.Warn("CLI agents run unconfined (they can write outside the repository): " + why)
			}
		})
	}
	return rules
}

// isolate makes cmd start in a user namespace of its own (see
// proc.Isolation) unless confinement is off; where the kernel refuses one,
// Options.Warn is told once and cmd starts as it is.
func (d *Driver) isolate(cmd *exec.Cmd) {
	if d.opts.Confine == agent.ConfineOff {
		return
	}
	iso, why := d.iso.Get()
	if iso == nil {
		d.isoWarn.Do(func() {
			if d.opts.Warn != nil {
				d.opts.Warn("CLI agents can read the environment of gaffer and of your shell: " + why)
			}
		})
		return
	}
	iso.Apply(cmd)
}

// sandbox returns the sandbox helper's executable and the Sandbox to
// start a session through (see proc.Helper.For): "" when it starts
// without. Warn is told once when the helper cannot make a writable
// directory's .git read-only (an in-place run), and once when it cannot
// give sessions a PID namespace of their own.
func (d *Driver) sandbox(writable []string, landlock bool, layers []proc.Layer) (string, proc.Sandbox) {
	exe, sb := d.helper.For(writable, landlock, layers)
	if _, why := d.helper.Get(); why != "" && len(proc.GitDirsIn(writable)) > 0 {
		d.helperWarn.Do(func() { d.warnf("CLI agents can write the repository's .git in an in-place run: " + why) })
	}
	if ok, why := d.helper.PID(); !ok {
		d.pidWarn.Do(func() { d.warnf(agent.PIDNamespaceWarning + why) })
	}
	return exe, sb
}

// warnf tells Options.Warn, when there is one.
func (d *Driver) warnf(msg string) {
	if d.opts.Warn != nil {
		d.opts.Warn(msg)
	}
}

// writable returns the paths a confined session of program may write
// beneath besides the Go caches (see proc.GoCaches): the repository dir,
// its TMPDIR tmp, the agent's own state (see agentState) and the
// template's Writable. It creates the agent's state directories that are
// missing, since the agent itself could not.
func (d *Driver) writable(program, dir, tmp string, env []string) []string {
	paths := []string{dir, tmp}
	dirs, files := agentState(program, env)
	for _, p := range dirs {
		_ = os.MkdirAll(p, 0o700) // a failure shows as the agent's own
	}
	paths = append(append(paths, dirs...), files...)
	return append(paths, d.opts.Template.Writable...)
}

// agentState returns the directories and files where the agent CLI that
// program names keeps the state it must write, in the command's environment env: its sessions
// (which --resume reads), settings and backups.
//
//   - Claude Code ("claude"): $CLAUDE_CONFIG_DIR when set (it then holds
//     .claude.json too), else $HOME/.claude and the file $HOME/.claude.json.
//     Claude Code 2.1 writes .claude.json through a temporary file beside it
//     and locks it with a directory $HOME/.claude.json.lock; confined, both
//     are refused (HOME itself is not writable) and it writes the file in
//     place, unlocked, instead. A missing .claude.json cannot be created, so
//     its global settings are then not kept; sessions and --resume, which
//     live under .claude, work.
//   - Codex ("codex"): $CODEX_HOME when set, else $HOME/.codex (tested with the real Codex CLI).
//
// Other programs get nothing; Template.Writable adds what they need.
func agentState(program string, env []string) (dirs, files []string) {
	home := environ.Get(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	in := func(name string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(home, name)
	}
	switch filepath.Base(program) {
	case "claude":
		if c := environ.Get(env, "CLAUDE_CONFIG_DIR"); c != "" {
			dirs = []string{c}
		} else {
			dirs, files = []string{in(".claude")}, []string{in(".claude.json")}
		}
	case "codex":
		if c := environ.Get(env, "CODEX_HOME"); c != "" {
			dirs = []string{c}
		} else {
			dirs = []string{in(".codex")}
		}
	}
	empty := func(p string) bool { return p == "" }
	return slices.DeleteFunc(dirs, empty), slices.DeleteFunc(files, empty)
}
