package control

import (
	"errors"
	"fmt"
)

// Errors of the package. Test for them with errors.Is.
var (
	// ErrNoServer is returned by Client.Call when no process listens on the
	// socket: the caller should open the store itself.
	ErrNoServer = errors.New("control: no process holds the store")
	// ErrInUse is returned by Listen when a live process answers on the path.
	ErrInUse = errors.New("control: socket in use by another process")
	// ErrNotSocket is returned by Listen when the path exists and is not a socket.
	ErrNotSocket = errors.New("control: path exists and is not a socket")
	// ErrPathTooLong is returned for a socket path longer than unix sockets allow.
	ErrPathTooLong = errors.New("control: socket path too long")
	// ErrUnknownOp is returned (remotely) for an operation the server does not serve.
	ErrUnknownOp = errors.New("control: unknown operation")
	// ErrProtocol is returned for a malformed request or response.
	ErrProtocol = errors.New("control: protocol error")
	// ErrStranger is returned by Client.Call when the process answering on
	// the socket runs as another user: nothing is sent to it.
	ErrStranger = errors.New("control: the socket is answered by another user")
	// ErrUnsafeDir is returned when the private directory that holds a
	// socket whose path was too long (see SocketPath) is not a directory
	// of ours that only we can enter.
	ErrUnsafeDir = errors.New("control: the socket directory is not private")
)

// RemoteError is a failure the server reported for a call.
type RemoteError struct {
	Op   string
	Msg  string
	Exit int // the exit code the command should end with; 0 if none given
}

// Error returns the server's message.
func (e *RemoteError) Error() string { return e.Msg }

// ExitCode returns the exit code the server asked for.
func (e *RemoteError) ExitCode() int { return e.Exit }

// Is matches ErrUnknownOp when the server did not know the operation.
func (e *RemoteError) Is(target error) bool {
	return target == ErrUnknownOp && e.Exit == exitUnknownOp
}

// exitUnknownOp is the exit code of an unknown operation: a usage error.
const exitUnknownOp = 2

// exitCoder is an error carrying an exit code, such as cli.ExitError
// through an adapter or RemoteError itself.
type exitCoder interface{ ExitCode() int }

func protocolf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
