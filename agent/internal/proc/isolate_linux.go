package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// apply asks for the new user namespace only: Start writes its id maps
// itself (writeIDMaps), from a thread Landlock does not restrict, before
// it lets the command run. Go would write them from the thread that starts
// the process, which Landlock may keep from writing /proc.
func (iso *Isolation) apply(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
}

// mapsPending says whether cmd starts in a new user namespace whose id maps
// Start must write.
func mapsPending(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && a.Cloneflags&syscall.CLONE_NEWUSER != 0 && a.UidMappings == nil && a.GidMappings == nil
}

// writeIDMaps maps, in the user namespace of process pid, this process's
// user and group ids to themselves, on a goroutine of its own (so never on
// a thread Landlock restricts; see OffThread). Until then the process's
// ids are unmapped, and it has no capability.
func writeIDMaps(pid int) error {
	errc := make(chan error, 1)
	go func() {
		dir := fmt.Sprintf("/proc/%d/", pid)
		write := func(name, data string) error {
			if err := os.WriteFile(dir+name, []byte(data), 0); err != nil {
				return fmt.Errorf("user namespace: %w", err)
			}
			return nil
		}
		uid, gid := os.Getuid(), os.Getgid()
		err := write("setgroups", "deny")
		if err == nil {
			err = write("uid_map", fmt.Sprintf("%d %d 1\n", uid, uid))
		}
		if err == nil {
			err = write("gid_map", fmt.Sprintf("%d %d 1\n", gid, gid))
		}
		errc <- err
	}()
	return <-errc
}

// probe starts a shell in a new user namespace: the kernel may have user
// namespaces off, or limit them (user.max_user_namespaces, AppArmor's
// apparmor_restrict_unprivileged_userns).
func probe() (*Isolation, string) {
	iso := &Isolation{}
	cmd := exec.Command("/bin/sh", "-c", ":")
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("the kernel refuses a user namespace (%v%s; it needs user namespaces enabled for unprivileged users)", err, trimOut(out))
	}
	return iso, ""
}

func trimOut(out []byte) string {
	if len(out) == 0 {
		return ""
	}
	if len(out) > 200 {
		out = out[:200]
	}
	return ": " + string(out)
}
