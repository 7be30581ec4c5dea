// Package pgtest gives tests a real PostgreSQL: a server the test binary
// starts itself (initdb and pg_ctl in a temporary directory, listening on a
// unix socket in that directory only, as user nobody when the tests run as
// root), or the server GAFFER_TEST_POSTGRES_URL names. Each test gets a
// database of its own.
//
// A test binary calls Main from TestMain; tests call URL. The server starts
// on the first URL and stops when Main returns. When it cannot start, URL
// skips the test with the reason, unless CI=true or
// GAFFER_REQUIRE_POSTGRES=1, where it fails it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names an existing server to use instead of starting one: a URL
// whose user may create and drop databases.
const EnvURL = "GAFFER_TEST_POSTGRES_URL"

var (
	once   sync.Once
	server *Server
	admin  string // URL of the maintenance database
	failed error
	dbs    atomic.Int64
)

// Main runs the tests of m and stops the server they started, if any.
// Call it from TestMain: os.Exit(pgtest.Main(m)) is not needed; Main exits.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server URL started, if any, and removes its directory:
// call it at the end of a TestMain that does not use Main.
func Stop() {
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
}

// Required reports whether a server that cannot start fails the tests
// rather than skipping them (CI=true or GAFFER_REQUIRE_POSTGRES=1).
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("GAFFER_REQUIRE_POSTGRES") == "1"
}

// URL returns the URL of a new, empty database for t, dropped when t
// ends. It skips t (or fails it, see Required) when no server can start.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			admin = u
			return
		}
		server, failed = Start()
		if failed == nil {
			admin = server.URL("postgres")
		}
	})
	if failed != nil {
		if Required() {
			t.Fatalf("pgtest: no PostgreSQL: %v", failed)
		}
		t.Skipf("pgtest: no PostgreSQL (set %s, or install initdb and pg_ctl): %v", EnvURL, failed)
	}
	name := fmt.Sprintf("gaffer_test_%d_%d", os.Getpid(), dbs.Add(1))
	if err := adminExec(fmt.Sprintf("CREATE DATABASE %s", name)); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := adminExec(fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return withDatabase(admin, name)
}

func adminExec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns raw with its database replaced by name.
func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

// Server is a PostgreSQL server in a temporary directory.
type Server struct {
	Dir  string // holds data/, the log and the socket
	User string // the OS user running it ("" for this process's user)
	bin  string
}

// Start runs initdb and starts a server listening only on a unix socket
// in a new temporary directory.
func Start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gaffer-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.User = "nobody"
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", "gaffer", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := s.Restart(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.watch()
	return s, nil
}

// watch starts a process that stops the server and removes its directory
// once this process is gone, so that a test binary that panics or is
// killed leaves no server behind.
func (s *Server) watch() {
	script := fmt.Sprintf(`while [ -d /proc/%d ]; do sleep 1; done; %s; rm -rf %s`,
		os.Getpid(), strings.Join(s.command("pg_ctl", "-D", s.data(), "-m", "immediate", "stop"), " "), s.Dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Start() == nil {
		go cmd.Wait() //nolint:errcheck // reaped when it ends
	}
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// Restart starts the server (again, after Kill).
func (s *Server) Restart() error {
	opts := fmt.Sprintf("-c listen_addresses='' -k %s -c max_connections=200 -c shared_buffers=32MB", s.Dir)
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v: %s %s", err, out, lastLines(string(log), 5))
	}
	return nil
}

// Kill stops the server at once, as a crash does (pg_ctl stop -m immediate).
func (s *Server) Kill() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// Stop stops the server and removes its directory.
func (s *Server) Stop() error {
	err := s.Kill()
	return errors.Join(err, os.RemoveAll(s.Dir))
}

// URL is the URL of database name on the server.
func (s *Server) URL(name string) string {
	return fmt.Sprintf("postgres://gaffer@/%s?host=%s", name, s.Dir)
}

func (s *Server) run(tool string, args ...string) ([]byte, error) {
	argv := s.command(tool, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// pg_ctl's server must not die with a test's process group signal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.CombinedOutput()
}

// binDir finds initdb and pg_ctl: on PATH, or in Debian's
// /usr/lib/postgresql/<version>/bin (newest first).
// command is the command line that runs tool as the server's user.
func (s *Server) command(tool string, args ...string) []string {
	argv := append([]string{filepath.Join(s.bin, tool)}, args...)
	if s.User != "" {
		argv = append([]string{"runuser", "-u", s.User, "--"}, argv...)
	}
	return argv
}

func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("initdb and pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
