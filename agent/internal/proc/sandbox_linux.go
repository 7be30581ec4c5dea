package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gaffer-dev/gaffer/agent/internal/landlock"
)

// HelperMain makes this program able to run as the sandbox helper. Call
// it first thing in main: when the program was started as the helper it
// confines itself and runs the command in its place, never returning;
// otherwise it notes that the program carries the helper and returns.
//
// The helper starts in a user namespace of its own (the caller's ids
// mapped to themselves) and a mount namespace of its own, with
// CAP_SYS_ADMIN there only (an ambient capability). It makes each
// Sandbox.ReadOnly directory a read-only bind mount of itself, gives up
// every capability (for uid 0 also the bounding set, and root's
// privileges at exec: SECBIT_NOROOT), confines its thread with Landlock to
// Sandbox.Writable, and runs the command: the command cannot write the
// repository's .git, nor undo the mount.
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
	return fmt.Errorf("exec %s: %w", sb.Path, syscall.Exec(sb.Path, argv, os.Environ()))
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
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	return nil
}

// probeHelper runs the helper once on a temporary directory.
func probeHelper() (string, string) {
	p := helperExe.Load()
	if p == nil {
		return "", "this program does not carry the sandbox helper"
	}
	dir, err := os.MkdirTemp("", "gaffer-probe-*")
	if err != nil {
		return "", err.Error()
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("/bin/sh", "-c", "if (: > x) 2>/dev/null; then exit 1; fi")
	cmd.Dir = dir
	if err := (Sandbox{ReadOnly: []string{dir}}).wrap(cmd, *p); err != nil {
		return "", err.Error()
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("the kernel refuses a mount namespace in a user namespace (%v%s)", err, trimOut(out))
	}
	return *p, ""
}
