//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// gateScript holds the command until gaffer has recorded its process
// group: it reads "go" from fd 3, then runs the command in its place. A
// gaffer that dies before that closes the pipe, and the command never runs.
// It also leaves a watchdog in the group, reading fd 4, whose other end
// only gaffer holds: when gaffer dies (or forgets the group) the read ends
// and the watchdog kills the whole group, so what the command started
// itself dies with gaffer too, not only the leader (Pdeathsig).
const gateScript = `read -r g <&3 && [ "$g" = go ] || exit 125; exec 3<&-; ` +
	`{ read -r _ <&4; kill -9 0; } </dev/null >/dev/null 2>&1 & exec 4<&-; exec "$@"`

// Start starts cmd in a process group of its own that gets SIGKILL when
// this process dies (Linux: Pdeathsig, which reaches the group's leader;
// see deathSignal), and, with rec set, lets it run only once rec has
// recorded the group (gateScript). A cmd that an Isolation applies to is
// held the same way until its user namespace's id maps are written. Call
// the Group's Kill and then Forget once the command has exited. A record
// that fails is an error matching ErrGroup.
func Start(cmd *exec.Cmd, rec Recorder) (*Group, error) {
	return start(cmd, rec, nil)
}

// StartIn is Start for a command that runs through the sandbox helper
// exe (see Helper and HelperMain), confined by sb: it is held behind the
// gate the same way, and the helper confines it before running it.
func StartIn(cmd *exec.Cmd, rec Recorder, sb Sandbox, exe string) (*Group, error) {
	if rec == nil {
		rec = noRecord{}
	}
	pid := sb.PID
	g, err := start(cmd, rec, func(cmd *exec.Cmd) error { return sb.wrap(cmd, exe) })
	if err == nil && pid {
		g.ns = nsID{} // the PID namespace ends what is left
	}
	return g, err
}

func start(cmd *exec.Cmd, rec Recorder, wrap func(*exec.Cmd) error) (*Group, error) {
	attr := cmd.SysProcAttr // an Isolation's settings stay
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid = true
	deathSignal(attr)
	cmd.SysProcAttr = attr
	isolated := mapsPending(cmd)
	if rec == nil && !isolated {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &Group{cmd: cmd, forget: func() {}}, nil
	}
	if rec == nil {
		rec = noRecord{} // the gate holds the command until its ids are mapped
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		return nil, fmt.Errorf("start gate: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start gate: %w", err)
	}
	defer w.Close()
	watchR, watchW, err := os.Pipe()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start gate: %w", err)
	}
	cmd.Args = append([]string{"sh", "-c", gateScript, "gaffer-gate", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = sh
	cmd.ExtraFiles = []*os.File{r, watchR} // fd 3, fd 4
	if wrap != nil {
		if err := wrap(cmd); err != nil {
			r.Close()
			watchR.Close()
			watchW.Close()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		isolated = mapsPending(cmd) // the helper's namespace has its maps
	}
	err = cmd.Start()
	r.Close()
	watchR.Close()
	if err != nil {
		watchW.Close()
		return nil, err
	}
	if isolated {
		if err := writeIDMaps(cmd.Process.Pid); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			watchW.Close()
			return nil, errors.Join(err, waitErr(cmd))
		}
	}
	ns, release := userNS(cmd.Process.Pid)
	g := &Group{cmd: cmd, ns: ns}
	recForget, err := rec.Record(cmd.Process.Pid)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		watchW.Close()
		release()
		return nil, errors.Join(fmt.Errorf("%w: %w", ErrGroup, err), waitErr(cmd))
	}
	// The watchdog's pipe stays open while the group is ours to end.
	g.forget = func() {
		recForget()
		watchW.Close()
		release()
	}
	if _, err := w.Write([]byte("go\n")); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		g.Forget()
		return nil, errors.Join(fmt.Errorf("start gate: %w", err), waitErr(cmd))
	}
	return g, nil
}

// Kill kills with SIGKILL what is left of the group and, when the
// command started in a user namespace of its own but not in a PID
// namespace of its own, every process of that namespace (and of those
// nested in it) wherever it went: a process that left the group
// (setsid) or the command's tree (a double fork) is still in the
// namespace, which it cannot leave. It returns the pids of such
// processes it killed. In a PID namespace of its own, the kernel ends
// them all when the helper exits.
func (g *Group) Kill() []int {
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	if g.ns.zero() {
		return nil
	}
	return sweep(g.ns)
}

// noRecord records nothing.
type noRecord struct{}

func (noRecord) Record(int) (func(), error) { return func() {}, nil }

// waitErr waits for cmd after it was killed; its exit is not an error.
func waitErr(cmd *exec.Cmd) error {
	var exit *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &exit) {
		return err
	}
	return nil
}

// Signal sends SIGTERM (terminate) or SIGKILL to the process group led by
// cmd's process. A group that is already gone is not an error.
func Signal(cmd *exec.Cmd, terminate bool) error {
	sig := syscall.SIGKILL
	if terminate {
		sig = syscall.SIGTERM
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
