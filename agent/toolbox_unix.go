//go:build unix

package agent

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/gaffer-dev/gaffer/agent/internal/environ"
	"github.com/gaffer-dev/gaffer/agent/internal/proc"
)

// runCommand runs cmd to its end in a process group of its own (see
// proc.Start), confined as ToolboxOptions.Confine says. Cancelling it
// kills the whole group, and so does its end.
func (t *Toolbox) runCommand(cmd *exec.Cmd) error {
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	rules, err := t.confinement()
	if err != nil {
		return err
	}
	if rules == nil {
		t.isolate(cmd)
		return t.runInGroup(cmd, t.opts.Groups)
	}
	tmp, err := os.MkdirTemp("", "gaffer-cmd-*")
	if err != nil {
		return fmt.Errorf("command temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd.Env = append(environ.Without(cmd.Env, "TMPDIR"), "TMPDIR="+tmp)
	writable := append(t.writableDirs(cmd.Env), tmp)
	if exe, ro := t.sandbox(writable); exe != "" {
		// The helper confines the command: .git read-only, then Landlock.
		forget, err := proc.StartIn(cmd, t.opts.Groups, proc.Sandbox{ReadOnly: ro, Writable: writable, Landlock: true}, exe)
		if err != nil {
			return err
		}
		return t.waitGroup(cmd, forget)
	}
	t.isolate(cmd)
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
	forget, err := proc.Start(cmd, rec)
	if err != nil {
		return err
	}
	return t.waitGroup(cmd, forget)
}

// waitGroup waits for the started cmd, kills what is left of its group
// and forgets the group's record.
func (t *Toolbox) waitGroup(cmd *exec.Cmd, forget func()) error {
	// Kill what the command left running as soon as it exits, so that a
	// background child holding its output does not hold up Wait.
	proc.AwaitExit(cmd.Process.Pid)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	err := cmd.Wait()
	forget()
	return err
}
