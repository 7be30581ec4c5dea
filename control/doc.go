// Package control is the control socket: how the gaffer process that holds
// a store answers the gaffer commands run in other terminals.
//
// Badger lets one process open a store. That process (a `gaffer run` or
// `gaffer serve`) listens on a unix socket beside the store — SocketPath
// gives <store>.sock, outside the Badger directory, or, when that is too
// long for a unix socket, a name derived from the store's path in
// PrivateDir ($XDG_RUNTIME_DIR/gaffer or /tmp/gaffer-<uid>, made 0700 and
// refused with ErrUnsafeDir unless it is ours, not a symbolic link and
// closed to others) — and every other command
// (status, list, history, approve, reject, cancel, submit) calls it when it
// is there and opens the store itself when it is not (ErrNoServer). On
// Linux the client reads the server's uid (SO_PEERCRED) before it sends
// anything and refuses a server of another user (ErrStranger).
//
// # Protocol
//
// One request per connection. The client writes one JSON object and a
// newline; the server answers with one JSON object and a newline, then
// closes the connection:
//
//	→ {"op":"status","args":{"run_id":"r-1"}}
//	← {"ok":true,"result":{...}}
//	← {"ok":false,"error":"run r-1 not found","exit":1}
//
// "op" names the operation; "args" is its argument object (any JSON). A
// failed call has ok false, a message for a person and the exit code the
// calling command should end with (0 when the handler gave none). Every
// server answers "ping" with an Info (pid, host, kind, version, store). The
// socket file has mode 0600: only the store's owner may control it.
//
// # Stale sockets
//
// A process killed with SIGKILL leaves its socket file behind. A client
// treats a socket nobody listens on (connection refused, or no file) as no
// server. Listen, which only the process that has just opened the store
// calls, removes such a file before binding; it refuses to start when a
// live process answers on the path (ErrInUse), and never removes a file
// that is not a socket.
package control
