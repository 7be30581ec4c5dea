package control

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// MaxPathLen is the longest socket path Listen and Dial accept (sun_path
// holds 108 bytes on Linux and 104 on the BSDs, with the terminating NUL).
const MaxPathLen = 103

// maxMessage bounds one request. A response is bounded by maxResponse:
// it comes from a server the client has checked is this user's, and a
// listing of 10,000 runs is over 16 MB.
const (
	maxMessage  = 16 << 20
	maxResponse = 1 << 30
)

// OpPing is the operation every server answers with its Info.
const OpPing = "ping"

// SocketPath returns the control socket of the store directory store:
// "<store>.sock", beside the Badger directory rather than inside it. When
// that path is too long for a unix socket, it is a name derived from the
// store's absolute path in a directory only the user can enter
// (PrivateDir): every process of the user computes the same one.
func SocketPath(store string) string {
	p := filepath.Clean(store) + ".sock"
	if len(p) <= MaxPathLen {
		return p
	}
	abs, err := filepath.Abs(store)
	if err != nil {
		abs = store
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(PrivateDir(), hex.EncodeToString(sum[:10])+".sock")
}

// PrivateDir is the directory of the sockets whose path beside the store
// is too long: $XDG_RUNTIME_DIR/gaffer, or gaffer-<uid> in the temporary
// directory. Listen makes it with mode 0700; Listen and Client.Call refuse
// it (ErrUnsafeDir) unless it is a real directory — not a symbolic link —
// owned by the user, that no one else may enter.
func PrivateDir() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "gaffer")
	}
	return filepath.Join(os.TempDir(), "gaffer-"+strconv.Itoa(os.Getuid()))
}

// checkDir checks, and with create makes, the private directory when path
// lies in it; other paths are left alone.
func checkDir(path string, create bool) error {
	dir := PrivateDir()
	if filepath.Dir(path) != dir {
		return nil
	}
	if create {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("control: make %s: %w", dir, err)
		}
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) && !create {
		return nil // no directory: no server
	}
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if why := unsafeDir(fi); why != "" {
		return fmt.Errorf("%w: %s %s; remove it and run the command again", ErrUnsafeDir, dir, why)
	}
	return nil
}

// Request is one call on the socket.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response is the answer to a Request.
type Response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Exit   int             `json:"exit,omitempty"`
}

// Info describes the process that holds the store; the answer to "ping".
type Info struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Kind    string    `json:"kind"` // "run" or "serve"
	Version string    `json:"version,omitempty"`
	Store   string    `json:"store,omitempty"`
	Started time.Time `json:"started"`
}

// HandlerFunc serves one operation: it decodes args, does the work and
// returns a result to encode as JSON, or an error.
type HandlerFunc func(ctx context.Context, args json.RawMessage) (any, error)

// Mux routes operations to handlers. Register with Handle before Serve.
type Mux struct {
	mu sync.RWMutex
	m  map[string]HandlerFunc
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{m: map[string]HandlerFunc{}} }

// Handle registers fn for op. As net/http.ServeMux does, it panics if op
// is empty, fn is nil or op already has a handler: a second registration
// is a programming error that would otherwise silently replace the first.
func (x *Mux) Handle(op string, fn HandlerFunc) {
	if op == "" {
		panic("control: Handle with an empty operation")
	}
	if fn == nil {
		panic("control: Handle " + op + " with a nil handler")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, dup := x.m[op]; dup {
		panic("control: operation " + op + " registered twice")
	}
	x.m[op] = fn
}

func (x *Mux) lookup(op string) (HandlerFunc, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	fn, ok := x.m[op]
	return fn, ok
}

// Ops lists the registered operations (for tests and error messages).
func (x *Mux) Ops() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ops := make([]string, 0, len(x.m))
	for op := range x.m {
		ops = append(ops, op)
	}
	return ops
}

// Config configures a Server.
type Config struct {
	// Path is the socket path, usually SocketPath(store).
	Path string
	// Mux serves the operations; "ping" is answered by the server itself.
	Mux *Mux
	// Info is the answer to "ping"; PID, Host and Started are filled in
	// when zero.
	Info Info
	// ExitCode maps a handler's error to the exit code the client should end
	// with. Nil means 1 for every error, or the error's own ExitCode().
	ExitCode func(error) int
	// ReadTimeout bounds reading a request; default 10s.
	ReadTimeout time.Duration
}

func (c *Config) validate() error {
	if c.Path == "" {
		return fmt.Errorf("control: empty socket path")
	}
	if len(c.Path) > MaxPathLen {
		return fmt.Errorf("%w: %d bytes (at most %d): %s", ErrPathTooLong, len(c.Path), MaxPathLen, c.Path)
	}
	if c.Mux == nil {
		c.Mux = NewMux()
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = 10 * time.Second
	}
	if c.Info.PID == 0 {
		c.Info.PID = os.Getpid()
	}
	if c.Info.Host == "" {
		c.Info.Host, _ = os.Hostname()
	}
	if c.Info.Started.IsZero() {
		c.Info.Started = time.Now()
	}
	return nil
}

// Server answers requests on a unix socket.
type Server struct {
	cfg  Config
	ln   *net.UnixListener
	fi   os.FileInfo // the socket file, to remove only our own on Close
	wg   sync.WaitGroup
	once sync.Once
}

// Listen removes a stale socket at cfg.Path (one nobody answers on), binds
// a new one with mode 0600 (see bindPrivate) and returns the server, ready
// to Serve. Call it
// only while holding the store, so that no other process races for the path.
func Listen(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := checkDir(cfg.Path, true); err != nil {
		return nil, err
	}
	if _, err := RemoveStale(cfg.Path); err != nil {
		return nil, err
	}
	ln, fi, err := bindPrivate(cfg.Path)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, ln: ln, fi: fi}, nil
}

// bindPrivate binds a unix socket at path that is never reachable by
// others, not even for a moment: it binds in a fresh 0700 directory beside
// path, sets the socket's mode to 0600, then renames it into place.
func bindPrivate(path string) (*net.UnixListener, os.FileInfo, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".gaffer-sock-")
	if err != nil {
		return nil, nil, fmt.Errorf("control: listen on %s: %w", path, err)
	}
	defer os.RemoveAll(tmp)
	inner := filepath.Join(tmp, "s")
	if len(inner) > MaxPathLen {
		// No room for the detour: bind in place, then restrict the mode.
		inner = path
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: inner, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("control: listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // the name moves; Close removes the final one
	fail := func(err error) (*net.UnixListener, os.FileInfo, error) {
		ln.Close()
		return nil, nil, err
	}
	if err := os.Chmod(inner, 0o600); err != nil {
		return fail(fmt.Errorf("control: chmod socket: %w", err))
	}
	if inner != path {
		if err := os.Rename(inner, path); err != nil {
			return fail(fmt.Errorf("control: listen on %s: %w", path, err))
		}
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(fmt.Errorf("control: listen on %s: %w", path, err))
	}
	return ln, fi, nil
}

// Path returns the socket path.
func (s *Server) Path() string { return s.cfg.Path }

// Serve answers connections until ctx is done or Close is called, then
// waits for the calls in flight and returns nil. The socket file is removed
// when the server stops.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	defer s.Close()
	for {
		conn, err := s.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				s.wg.Wait()
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.wg.Wait()
			return fmt.Errorf("control: accept: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, conn)
		}()
	}
}

// Close stops accepting connections and removes the socket file.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		if cur, serr := os.Lstat(s.cfg.Path); serr == nil && os.SameFile(cur, s.fi) {
			_ = os.Remove(s.cfg.Path)
		}
		if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("control: close: %w", cerr)
		}
	})
	return err
}

func (s *Server) serveConn(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout))
	resp := s.answer(ctx, conn)
	_ = conn.SetWriteDeadline(time.Now().Add(s.cfg.ReadTimeout))
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(Response{Error: fmt.Sprintf("control: encode result: %v", err), Exit: 1})
	}
	_, _ = conn.Write(append(b, '\n'))
}

func (s *Server) answer(ctx context.Context, conn io.Reader) Response {
	var req Request
	dec := json.NewDecoder(io.LimitReader(conn, maxMessage))
	if err := dec.Decode(&req); err != nil {
		return Response{Error: protocolf("read request: %v", err).Error(), Exit: 1}
	}
	if req.Op == OpPing {
		return s.result(s.cfg.Info)
	}
	fn, ok := s.cfg.Mux.lookup(req.Op)
	if !ok {
		return Response{Error: fmt.Sprintf("%v %q", ErrUnknownOp, req.Op), Exit: exitUnknownOp}
	}
	v, err := s.call(ctx, fn, req.Args)
	if err != nil {
		return Response{Error: err.Error(), Exit: s.exitCode(err)}
	}
	return s.result(v)
}

// call runs fn, turning a panic into an error: a bad request must not take
// the process holding the store down.
func (s *Server) call(ctx context.Context, fn HandlerFunc, args json.RawMessage) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("control: handler panicked: %v", p)
		}
	}()
	return fn(ctx, args)
}

func (s *Server) result(v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return Response{Error: fmt.Sprintf("control: encode result: %v", err), Exit: 1}
	}
	return Response{OK: true, Result: b}
}

func (s *Server) exitCode(err error) int {
	if s.cfg.ExitCode != nil {
		if c := s.cfg.ExitCode(err); c != 0 {
			return c
		}
		return 1
	}
	var ec exitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	return 1
}

// RemoveStale removes the socket at path when no process listens on it and
// reports whether it did. A path that does not exist is not an error; a
// live socket is ErrInUse; a file that is not a socket is ErrNotSocket.
func RemoveStale(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("control: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return false, fmt.Errorf("%w: %s", ErrNotSocket, path)
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		conn.Close()
		return false, fmt.Errorf("%w: %s", ErrInUse, path)
	}
	if !refused(err) {
		return false, fmt.Errorf("control: probe %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("control: remove stale socket: %w", err)
	}
	return true, nil
}

// refused reports whether a dial error means nobody listens on the socket.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// Client calls the server on a socket. The zero Timeout means 30 seconds.
type Client struct {
	Path    string
	Timeout time.Duration
}

// NewClient returns a client for the socket of the store directory store.
func NewClient(store string) *Client { return &Client{Path: SocketPath(store)} }

// Call sends op with args (encoded as JSON; nil for none) and decodes the
// result into result (unless nil). It returns ErrNoServer when nobody
// listens on the socket, and a *RemoteError when the server reports a
// failure.
func (c *Client) Call(ctx context.Context, op string, args, result any) error {
	if len(c.Path) > MaxPathLen {
		return fmt.Errorf("%w: %s", ErrPathTooLong, c.Path)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if err := checkDir(c.Path, false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Path)
	if err != nil {
		if refused(err) {
			return fmt.Errorf("%w (%s)", ErrNoServer, c.Path)
		}
		return fmt.Errorf("control: dial %s: %w", c.Path, err)
	}
	defer conn.Close()
	if err := checkPeer(conn, c.Path); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	req := Request{Op: op}
	if args != nil {
		if req.Args, err = json.Marshal(args); err != nil {
			return fmt.Errorf("control: encode %s args: %w", op, err)
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("control: encode request: %w", err)
	}
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("control: send %s: %w", op, err)
	}
	var resp Response
	line, err := bufio.NewReaderSize(io.LimitReader(conn, maxResponse), 64<<10).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if ctx.Err() != nil {
			return fmt.Errorf("control: %s: %w", op, ctx.Err())
		}
		return protocolf("%s: read response: %v", op, err)
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return protocolf("%s: decode response: %v", op, err)
	}
	if !resp.OK {
		return &RemoteError{Op: op, Msg: resp.Error, Exit: resp.Exit}
	}
	if result != nil && len(resp.Result) > 0 {
		if err := json.Unmarshal(resp.Result, result); err != nil {
			return fmt.Errorf("control: decode %s result: %w", op, err)
		}
	}
	return nil
}

// Ping asks the server who it is.
func (c *Client) Ping(ctx context.Context) (Info, error) {
	var info Info
	err := c.Call(ctx, OpPing, nil, &info)
	return info, err
}
