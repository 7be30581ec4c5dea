package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/agent/internal/proc"
	"github.com/gaffer-dev/gaffer/agent/internal/short"
	"github.com/gaffer-dev/gaffer/internal/secretenv"
	"github.com/gaffer-dev/gaffer/internal/tmpdir"
)

// ToolboxOptions configures a Toolbox. The zero value is ready to use.
type ToolboxOptions struct {
	// CommandTimeout bounds each Run; 0 means 10 minutes. A command that
	// runs over is killed with its whole process group.
	CommandTimeout time.Duration
	// MaxOutput is how many bytes of a command's output Run keeps: the first
	// quarter and the last three quarters, with a note of what was left out
	// between them. 0 means 64 KiB.
	MaxOutput int
	// Env is the environment commands start from; nil means the process's
	// own. Secrets are removed from it either way (see Toolbox.Run).
	Env []string
	// Groups, when set, records each command's process group before the
	// command starts working (see GroupRecorder).
	Groups GroupRecorder
	// Confine selects how commands are confined (see Confinement); the
	// zero value confines them with Landlock where the kernel has it.
	Confine Confinement
	// Warn, when set, is told once per Toolbox when commands cannot be
	// confined and run unconfined.
	Warn func(msg string)
}

// Defaults for ToolboxOptions.
const (
	DefaultCommandTimeout = 10 * time.Minute
	DefaultMaxOutput      = 64 << 10
)

// validate fills in the defaults and rejects nonsense.
func (o ToolboxOptions) validate() (ToolboxOptions, error) {
	if o.CommandTimeout < 0 {
		return o, fmt.Errorf("agent: negative command timeout %v", o.CommandTimeout)
	}
	if o.MaxOutput < 0 {
		return o, fmt.Errorf("agent: negative max output %d", o.MaxOutput)
	}
	if o.CommandTimeout == 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	o.Env = withoutSecrets(o.Env)
	return o, nil
}

// Toolbox does an agent's file and command work inside one repository.
// Every path it is given is relative to the repository root, uses forward
// slashes or the OS separator, and must stay inside the root: absolute
// paths, ".." escapes and symbolic links leading outside are refused with
// ErrPathEscape, and changes under .git with ErrProtectedPath. All errors are
// *ToolError. A Toolbox is safe for concurrent use; the files are not
// locked.
type Toolbox struct {
	root    string // absolute, symbolic links resolved
	opts    ToolboxOptions
	warn    sync.Once
	iso     proc.Isolator
	isoWarn sync.Once
	// helper starts commands in namespaces of their own (see sandbox).
	helper     proc.Helper
	helperWarn sync.Once
	pidWarn    sync.Once
	// caches is where the Go caches' layers (or the caches of the
	// commands' own) are kept from one command to the next, made by the
	// first command; inUse is held by the command using them (another,
	// at the same time, gets layers of its own).
	cachesMu sync.Mutex
	caches   *tmpdir.Dir
	inUse    sync.Mutex
}

// NewToolbox returns a Toolbox for the repository at dir.
func NewToolbox(dir string, opts ToolboxOptions) (*Toolbox, error) {
	opts, err := opts.validate()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: repository %q: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("agent: repository %q: %w", dir, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("agent: repository %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("agent: repository %q is not a directory", dir)
	}
	return &Toolbox{root: root, opts: opts}, nil
}

// Close removes what the Toolbox kept between its commands: the layers of
// the Go caches they share (see proc.GoCaches), where each command's
// builds go, so that the next command of the session need not compile
// them again. Call it once the session is over; the Toolbox can still be
// used after, and keeps them again. One not closed leaves them in the
// temporary directory.
func (t *Toolbox) Close() error {
	t.inUse.Lock()
	defer t.inUse.Unlock()
	t.cachesMu.Lock()
	dir := t.caches
	t.caches = nil
	t.cachesMu.Unlock()
	return dir.Remove()
}

// sharedCaches returns the directory for the Go caches' layers that the
// Toolbox's commands share, made when first asked, and its release; or
// "" when another command uses it now.
func (t *Toolbox) sharedCaches() (string, func()) {
	if !t.inUse.TryLock() {
		return "", nil
	}
	t.cachesMu.Lock()
	defer t.cachesMu.Unlock()
	if t.caches == nil {
		dir, err := tmpdir.Make("caches")
		if err != nil {
			t.inUse.Unlock()
			return "", nil
		}
		t.caches = dir
	}
	return t.caches.Path, t.inUse.Unlock
}

// Root returns the repository root, absolute and with symbolic links resolved.
func (t *Toolbox) Root() string { return t.root }

// Resolve returns the absolute path for path, checked as for reading.
func (t *Toolbox) Resolve(path string) (string, error) {
	return t.resolve("resolve", path, false)
}

// Read returns the contents of a file.
func (t *Toolbox) Read(path string) (string, error) {
	full, err := t.resolve("read", path, false)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return "", &ToolError{Op: "read", Path: path, Err: err}
	}
	return string(b), nil
}

// Write creates or replaces a file with content, making its parent
// directories. An existing file keeps its permissions.
func (t *Toolbox) Write(path, content string) error {
	full, err := t.resolve("write", path, true)
	if err != nil {
		return err
	}
	if err := writeFile(full, content); err != nil {
		return &ToolError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// Edit replaces the one occurrence of old in a file with new. It fails with
// ErrEditNotFound when old is not in the file and with ErrEditAmbiguous when
// it occurs more than once.
func (t *Toolbox) Edit(path, old, new string) error {
	full, err := t.resolve("edit", path, true)
	if err != nil {
		return err
	}
	fail := func(err error) error { return &ToolError{Op: "edit", Path: path, Err: err} }
	if old == "" {
		return fail(errors.New("the old text is empty"))
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return fail(err)
	}
	content := string(b)
	switch n := strings.Count(content, old); {
	case n == 0:
		return fail(fmt.Errorf("%w: %q is not in the file", ErrEditNotFound, short.Clip(old)))
	case n > 1:
		return fail(fmt.Errorf("%w: %q occurs %d times; include more of the surrounding text", ErrEditAmbiguous, short.Clip(old), n))
	}
	if err := writeFile(full, strings.Replace(content, old, new, 1)); err != nil {
		return fail(err)
	}
	return nil
}

// Delete removes a file, or a directory and everything in it. The path must
// exist. A symbolic link is removed itself, not what it points to.
func (t *Toolbox) Delete(path string) error {
	full, err := t.resolve("delete", path, true)
	if err != nil {
		return err
	}
	if full == t.root {
		return &ToolError{Op: "delete", Path: path, Err: errors.New("refusing to delete the repository root")}
	}
	if _, err := os.Lstat(full); err != nil {
		return &ToolError{Op: "delete", Path: path, Err: err}
	}
	if err := os.RemoveAll(full); err != nil {
		return &ToolError{Op: "delete", Path: path, Err: err}
	}
	return nil
}

// Mkdir makes a directory and its parents; an existing directory is fine.
func (t *Toolbox) Mkdir(path string) error {
	full, err := t.resolve("mkdir", path, true)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(full, 0o755); err != nil {
		return &ToolError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// CommandResult is what a command did.
type CommandResult struct {
	Output   string // stdout and stderr interleaved, cut to ToolboxOptions.MaxOutput
	ExitCode int    // -1 when it was killed
	TimedOut bool   // killed after ToolboxOptions.CommandTimeout
}

// Failed reports whether the command exited non-zero or timed out.
func (r CommandResult) Failed() bool { return r.ExitCode != 0 || r.TimedOut }

// Run runs command with "sh -c" in the repository root, with stdin empty and
// the environment of ToolboxOptions.Env minus secrets: every variable whose
// name ends in _API_KEY, _ACCESS_KEY, _SECRET, _SECRET_KEY, _TOKEN or
// _PASSWORD (any case). Its output is captured and, when echo is not nil,
// copied to echo as it comes. A non-zero exit or a timeout is reported in
// the result, not as an error; the error is for a command that could not
// start, or a ctx that ended (then it wraps ctx.Err() and the command's
// process group has been killed).
//
// The command runs in a process group of its own, recorded through
// ToolboxOptions.Groups before it starts, killed when the command ends
// (what it left in the background ends with it) and, on Linux, when gaffer
// dies. With Landlock (see Confinement) it can write only under the
// repository root, a temporary directory of its own (TMPDIR, removed
// afterwards), the Go build and module caches and /dev; it can still read
// any file the user can.
func (t *Toolbox) Run(ctx context.Context, command string, echo io.Writer) (CommandResult, error) {
	runCtx, cancel := context.WithTimeout(ctx, t.opts.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "sh", "-c", command)
	cmd.Dir = t.root
	cmd.Env = t.opts.Env
	cmd.WaitDelay = 5 * time.Second
	out := newCapWriter(t.opts.MaxOutput)
	var w io.Writer = out
	if echo != nil {
		w = io.MultiWriter(out, echo)
	}
	cmd.Stdout, cmd.Stderr = w, w // one writer: exec writes it from one goroutine at a time
	err := t.runCommand(cmd)
	res := CommandResult{Output: out.String(), ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() != nil {
		return res, &ToolError{Op: "run", Path: command, Err: ctx.Err()}
	}
	if runCtx.Err() != nil {
		res.TimedOut = true
		res.Output += fmt.Sprintf("\n[killed: the command ran longer than %v]", t.opts.CommandTimeout)
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, &ToolError{Op: "run", Path: command, Err: err}
	}
	return res, nil
}

// resolve checks path and returns it as an absolute path under the root.
// For a change (mutate), paths under .git are refused, and the last element
// of a deleted path is not followed if it is a symbolic link.
func (t *Toolbox) resolve(op, path string, mutate bool) (string, error) {
	fail := func(err error) (string, error) { return "", &ToolError{Op: op, Path: path, Err: err} }
	if strings.TrimSpace(path) == "" {
		return fail(errors.New("empty path"))
	}
	native := filepath.FromSlash(path)
	if filepath.IsAbs(native) || strings.HasPrefix(path, "/") || strings.HasPrefix(path, `\`) || filepath.VolumeName(native) != "" {
		return fail(fmt.Errorf("%w: it is absolute; give a path relative to the repository root", ErrPathEscape))
	}
	clean := filepath.Clean(native)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return fail(fmt.Errorf("%w: it leads outside through \"..\"", ErrPathEscape))
	}
	var real string
	var err error
	if op == "delete" && clean != "." {
		// Follow links up to the parent only: removing a link removes the link.
		var parent string
		if parent, err = t.realPath(filepath.Dir(clean)); err == nil {
			real = filepath.Join(parent, filepath.Base(clean))
		}
	} else {
		real, err = t.realPath(clean)
	}
	if err != nil {
		return fail(err)
	}
	if mutate && (underGit(clean) || underGit(t.rel(real))) {
		return fail(ErrProtectedPath)
	}
	return real, nil
}

// realPath resolves the symbolic links along clean (a cleaned relative path)
// one element at a time, refusing any that lead outside the root. Elements
// that do not exist yet are taken as they are: they will be made as plain
// directories and files.
func (t *Toolbox) realPath(clean string) (string, error) {
	if clean == "." {
		return t.root, nil
	}
	cur := t.root
	parts := strings.Split(clean, string(filepath.Separator))
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", fmt.Errorf("%w: the symbolic link %s cannot be resolved: %v",
					ErrPathEscape, filepath.ToSlash(filepath.Join(parts[:i+1]...)), err)
			}
			if !t.within(resolved) {
				return "", fmt.Errorf("%w: the symbolic link %s points outside it",
					ErrPathEscape, filepath.ToSlash(filepath.Join(parts[:i+1]...)))
			}
			next = resolved
		}
		cur = next
	}
	return cur, nil
}

// within reports whether p (absolute, cleaned) is the root or under it.
func (t *Toolbox) within(p string) bool {
	return p == t.root || strings.HasPrefix(p, t.root+string(filepath.Separator)) ||
		(strings.HasSuffix(t.root, string(filepath.Separator)) && strings.HasPrefix(p, t.root))
}

// rel returns p relative to the root (p is under it).
func (t *Toolbox) rel(p string) string {
	r, err := filepath.Rel(t.root, p)
	if err != nil {
		return p
	}
	return r
}

// underGit reports whether a relative path is .git or inside it.
func underGit(rel string) bool {
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return first == ".git"
}

// writeFile writes content to path, making parent directories and keeping
// the permissions of an existing file.
func writeFile(path, content string) error {
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return errors.New("it is a directory")
		}
		perm = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), perm)
}

// withoutSecrets returns env without the variables named like secrets.
func withoutSecrets(env []string) []string { return secretenv.Without(env) }

// isSecretName reports whether an environment variable's name marks a secret.
func isSecretName(name string) bool { return secretenv.IsSecret(name) }

// capWriter keeps the first quarter and the last three quarters of at most
// max bytes written to it.
type capWriter struct {
	max, headMax, tailMax int
	head, tail            []byte
	total                 int
}

func newCapWriter(max int) *capWriter {
	h := max / 4
	return &capWriter{max: max, headMax: h, tailMax: max - h}
}

// Write never fails.
func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.total += n
	if room := w.headMax - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*w.tailMax {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.tailMax:]...)
	}
	return n, nil
}

// String returns what was kept, with a note where bytes were left out.
func (w *capWriter) String() string {
	tail := w.tail
	if len(tail) > w.tailMax {
		tail = tail[len(tail)-w.tailMax:]
	}
	if w.total <= w.max {
		return string(w.head) + string(tail)
	}
	omitted := w.total - len(w.head) - len(tail)
	return strings.ToValidUTF8(string(w.head), "") +
		fmt.Sprintf("\n[… %d bytes of output left out …]\n", omitted) +
		strings.ToValidUTF8(string(tail), "")
}

// IsSecretName reports whether an environment variable's name marks a
// secret (…_API_KEY, …_TOKEN, …_SECRET, …_PASSWORD, …): its value is
// withheld from agents' commands and redacted from what gaffer keeps.
func IsSecretName(name string) bool { return isSecretName(name) }
