package control

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// checkPeer refuses a connection whose server runs as another user
// (SO_PEERCRED): a stranger must not receive a request, which may carry
// an approval and its feedback.
func checkPeer(conn net.Conn, path string) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return fmt.Errorf("control: %s: %w", path, err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return fmt.Errorf("control: %s: %w", path, err)
	}
	if cerr != nil {
		return fmt.Errorf("control: %s: peer credentials: %w", path, cerr)
	}
	if uid := os.Getuid(); int(cred.Uid) != uid {
		return fmt.Errorf("%w: %s is answered by pid %d of uid %d, not by you (uid %d); nothing was sent — remove the socket if it is not a gaffer of yours",
			ErrStranger, path, cred.Pid, cred.Uid, uid)
	}
	return nil
}
