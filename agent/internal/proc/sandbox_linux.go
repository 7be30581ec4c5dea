package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
)

// HelperMain makes this program able to run as the sandbox helper. Call
// it first thing in main: when the program was started as the helper it
// confines itself and runs the command, never returning; otherwise it
// notes that the program carries the helper and returns.
//
// The helper starts in a user namespace of its own (the caller's ids
// mapped to themselves) and a mount namespace of its own, with
// CAP_SYS_ADMIN there only (an ambient capability); with Sandbox.PID also
// as the first process of a PID namespace of its own. It makes each
// Sandbox.ReadOnly path a read-only bind mount of itself, layers each of
// Sandbox.Layers with an overlay, mounts /proc anew for the PID
// namespace, gives up every capability (for uid 0 also the bounding set,
// and root's privileges at exec: SECBIT_NOROOT), confines its thread with
// Landlock to Sandbox.Writable, and runs the command: the command cannot
// write the repository's .git nor the directories layered, nor undo the
// mounts. Without Sandbox.PID the command runs in the helper's place;
// with it the helper starts the command as its child, waits for it as
// the namespace's init (reaping what is orphaned there, ignoring the
// signals it can, which therefore reach it from nowhere), and exits with
// the command's status (128+N for a command killed by signal N), upon
// which the kernel kills every process left in the namespace.
func HelperMain() {
	if len(os.Args) < 3 || os.Args[0] != helperArg0 {
		if exe, err := os.Executable(); err == nil {
			helperExe.Store(&exe)
		}
		return
	}
	runtime.LockOSThread() // the confinement is the thread's; exec runs from it
	err := runHelper(os.Args[1], os.Args[3:])
	fmt.Fprintf(os.Stderr, "gaffer sandbox: %v\n", err)
	os.Exit(126)
}

func runHelper(specJSON string, argv []string) error {
	var sb Sandbox
	if err := json.Unmarshal([]byte(specJSON), &sb); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, p := range sb.ReadOnly {
		if err := readOnly(p); err != nil {
			return err
		}
	}
	for _, l := range sb.Layers {
		if err := overlay(l); err != nil {
			return err
		}
	}
	if sb.PID {
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc for the PID namespace: %w", err)
		}
	}
	// The working directory was entered before the mounts: enter it again
	// through them, or a read-only directory stays writable through it.
	if wd, err := os.Getwd(); err == nil {
		if err := os.Chdir(wd); err != nil {
			return fmt.Errorf("chdir %s: %w", wd, err)
		}
	}
	if err := dropCaps(); err != nil {
		return err
	}
	if sb.Landlock {
		rules, why := landlock.Available()
		if rules == nil {
			return errors.New(why)
		}
		if err := rules.RestrictThread(sb.Writable); err != nil {
			return fmt.Errorf("confine: %w", err)
		}
	} else if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if len(argv) == 0 {
		return errors.New("no command")
	}
	if sb.PID {
		return initOf(sb.Path, argv)
	}
	return fmt.Errorf("exec %s: %w", sb.Path, syscall.Exec(sb.Path, argv, os.Environ()))
}

// initOf starts path as the child of this process, the first of its PID
// namespace, from the calling (confined, locked) thread, and lives as
// the namespace's init until the child exits: then it exits with the
// child's status, and the kernel kills the rest of the namespace. The
// child gets every file descriptor this process inherited (stdin, out
// and err, and the start gate's pipes). The signals a process can catch
// are caught and dropped: gaffer signals the whole process group, which
// the child is in, so nothing needs passing on; and a process of the
// namespace cannot end or stop its init.
func initOf(path string, argv []string) error {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	fds := inherited()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: fds})
	if err != nil {
		return fmt.Errorf("start %s: %w", path, err)
	}
	for _, fd := range fds[3:] {
		if fd != ^uintptr(0) {
			_ = unix.Close(int(fd))
		}
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for %s: %w", path, err)
		}
		if got != pid {
			continue // an orphan of the namespace, reaped
		}
		switch {
		case ws.Exited():
			os.Exit(ws.ExitStatus())
		case ws.Signaled():
			os.Exit(128 + int(ws.Signal()))
		}
	}
}

// inherited returns the file descriptors this process was started with,
// for ForkExec: 0, 1 and 2, and those above that are not close-on-exec
// (the ones Go's runtime opens itself are); a gap is ^0 (closed).
func inherited() []uintptr {
	fds := []uintptr{0, 1, 2}
	last := 2
	for fd := 3; fd < 64; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		for len(fds) < fd {
			fds = append(fds, ^uintptr(0))
		}
		fds = append(fds, uintptr(fd))
		last = fd
	}
	return fds[:last+1]
}

// overlay mounts an overlay on l.Dir whose lower layer is l.Dir itself
// and whose upper layer, where every change goes, is made in l.Upper.
func overlay(l Layer) error {
	if strings.ContainsAny(l.Dir+l.Upper, ",:\\") {
		return fmt.Errorf("layer %s: a path with a comma, colon or backslash cannot be layered", l.Dir)
	}
	if err := os.MkdirAll(l.Dir, 0o755); err != nil {
		return fmt.Errorf("layer %s: %w", l.Dir, err)
	}
	upper, work := filepath.Join(l.Upper, "upper"), filepath.Join(l.Upper, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("layer %s: %w", l.Dir, err)
		}
	}
	opts := "lowerdir=" + l.Dir + ",upperdir=" + upper + ",workdir=" + work
	err := unix.Mount("overlay", l.Dir, "overlay", 0, "userxattr,"+opts)
	if err != nil { // kernels before 5.11 have no userxattr
		err = unix.Mount("overlay", l.Dir, "overlay", 0, opts)
	}
	if err != nil {
		return fmt.Errorf("layer %s: %w", l.Dir, err)
	}
	return nil
}

// readOnly bind-mounts p on itself read-only, keeping the flags the
// kernel locks on a mount seen from a user namespace.
func readOnly(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}

// dropCaps gives up the ambient capability the helper started with and,
// for uid 0 (whom exec would give every capability of the namespace
// again), the bounding set and root's privileges at exec.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if os.Getuid() != 0 {
		return nil // exec takes the rest: no ambient capability, not root
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	const noRoot = 1<<0 | 1<<1 | 1<<2 | 1<<3 // SECBIT_NOROOT, _LOCKED, SECBIT_NO_SETUID_FIXUP, _LOCKED
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, noRoot, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	return nil
}

// wrap makes cmd run through the helper executable exe, confined by sb.
func (sb Sandbox) wrap(cmd *exec.Cmd, exe string) error {
	sb.Path = cmd.Path
	spec, err := json.Marshal(sb)
	if err != nil {
		return err
	}
	cmd.Args = append([]string{helperArg0, string(spec), "--"}, cmd.Args...)
	cmd.Path = exe
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	uid, gid := os.Getuid(), os.Getgid()
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	if sb.PID {
		a.Cloneflags |= syscall.CLONE_NEWPID
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	return nil
}

// probeHelper runs the helper on a temporary directory: with a PID
// namespace and a layered directory first, and where that fails with
// neither and then each alone, to tell what the kernel refuses.
func probeHelper() (p probed) {
	exe := helperExe.Load()
	if exe == nil {
		p.why = "this program does not carry the sandbox helper"
		p.pidWhy, p.layersWhy = p.why, p.why
		return p
	}
	made, err := tmpdir.Make("probe")
	if err != nil {
		p.why, p.pidWhy, p.layersWhy = err.Error(), err.Error(), err.Error()
		return p
	}
	defer made.Remove()
	dir := made.Path
	n := 0
	try := func(pid, layer bool) string {
		n++
		run := filepath.Join(dir, strconv.Itoa(n))
		ro, cache := filepath.Join(run, "ro"), filepath.Join(run, "cache")
		for _, d := range []string{ro, cache} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err.Error()
			}
		}
		sb := Sandbox{ReadOnly: []string{ro}, PID: pid}
		// The command fails when the read-only directory is writable,
		// when it sees more processes than its own few in a PID
		// namespace, or when it cannot write the layered directory. The
		// helper is a Go program: its threads take numbers of the new
		// namespace before sh starts (10 and more on a loaded machine), so
		// the bound is loose; that gaffer's own process is not seen is the
		// sharp test.
		check := "if (: > ro/x) 2>/dev/null; then exit 1; fi"
		if pid {
			check += `; [ $$ -lt 200 ] || { echo "pid $$" >&2; exit 2; }; [ ! -e /proc/` + strconv.Itoa(os.Getpid()) + ` ] || { echo "sees gaffer" >&2; exit 4; }`
		}
		if layer {
			sb.Layers = []Layer{{Dir: cache, Upper: filepath.Join(run, "layer")}}
			check += "; : > cache/x || exit 3"
		}
		cmd := exec.Command("/bin/sh", "-c", check)
		cmd.Dir = run
		if err := sb.wrap(cmd, *exe); err != nil {
			return err.Error()
		}
		cmd.SysProcAttr.Setpgid = true // no signal meant for this process's group
		deathSignal(cmd.SysProcAttr)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Sprintf("%v%s", err, trimOut(out))
		}
		if _, err := os.Lstat(filepath.Join(cache, "x")); err == nil {
			return "the layered directory itself was written"
		}
		return ""
	}
	if try(true, true) == "" {
		return probed{exe: *exe, pid: true, layers: true}
	}
	if why := try(false, false); why != "" {
		p.why = "the kernel refuses a mount namespace in a user namespace (" + why + ")"
		p.pidWhy, p.layersWhy = p.why, p.why
		return p
	}
	p.exe = *exe
	if why := try(true, false); why != "" {
		p.pidWhy = "the kernel refuses a PID namespace in a user namespace (" + why + ")"
	} else {
		p.pid = true
	}
	if why := try(false, true); why != "" {
		p.layersWhy = "the kernel refuses an overlay in a user namespace (" + why + ")"
	} else {
		p.layers = true
	}
	return p
}
