//go:build unix

package agent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
)

// runCommand runs cmd to its end in a process group of its own (see
// proc.Start), confined as ToolboxOptions.Confine says. Cancelling it
// kills the whole group, and so does its end; so does the end of
// whatever it left running that left the group (see proc.Group.Kill).
func (t *Toolbox) runCommand(cmd *exec.Cmd) error {
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	rules, err := t.confinement()
	if err != nil {
		return err
	}
	if t.opts.Confine == ConfineOff {
		return t.runInGroup(cmd, t.opts.Groups)
	}
	dir, err := tmpdir.Make("cmd")
	if err != nil {
		return fmt.Errorf("command temp dir: %w", err)
	}
	defer dir.Remove()
	work := dir.Path
	tmp := filepath.Join(work, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("command temp dir: %w", err)
	}
	cmd.Env = append(environ.Without(cmd.Env, "TMPDIR"), "TMPDIR="+tmp)
	writable := []string{t.root, tmp}
	var layers []proc.Layer
	if layered := t.helper.Layered(); layered || rules != nil {
		// The Go caches are the user's: a command sees them layered, or
		// gets caches of its own (see proc.GoCaches), which the next
		// command of the session finds as this one left them.
		where := work
		if shared, release := t.sharedCaches(); shared != "" {
			defer release()
			where = shared
		}
		var caches []string
		layers, caches, cmd.Env = proc.GoCaches(cmd.Env, where, layered)
		writable = append(writable, caches...)
	}
	if exe, sb := t.sandbox(writable, rules != nil, layers); exe != "" {
		// The helper confines the command: its namespaces, .git
		// read-only, the caches layered, then Landlock.
		g, err := proc.StartIn(cmd, t.opts.Groups, sb, exe)
		if err != nil {
			return err
		}
		return t.waitGroup(cmd, g)
	}
	t.isolate(cmd)
	if rules == nil {
		return t.runInGroup(cmd, t.opts.Groups)
	}
	errc := make(chan error, 1)
	rules.Go(writable, func(confineErr error) {
		// The Landlock domain is the thread's, and the command inherits it
		// from the thread that forks it; the thread ends after the command
		// has been waited for.
		if confineErr != nil {
			errc <- fmt.Errorf("confine the command: %w", confineErr)
			return
		}
		errc <- t.runInGroup(cmd, proc.OffThread(t.opts.Groups))
	})
	return <-errc
}

// runInGroup starts cmd in a group recorded by rec, waits for it, and kills
// what is left of the group.
func (t *Toolbox) runInGroup(cmd *exec.Cmd, rec GroupRecorder) error {
	g, err := proc.Start(cmd, rec)
	if err != nil {
		return err
	}
	return t.waitGroup(cmd, g)
}

// waitGroup waits for the started cmd, kills what is left of its group
// (and of its namespaces) and forgets the group's record.
func (t *Toolbox) waitGroup(cmd *exec.Cmd, g *proc.Group) error {
	// Kill what the command left running as soon as it exits, so that a
	// background child holding its output does not hold up Wait.
	proc.AwaitExit(cmd.Process.Pid)
	g.Kill()
	err := cmd.Wait()
	g.Forget()
	return err
}
