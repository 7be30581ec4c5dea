package inbox

import (
	"context"
	"crypto/rand"
	"embed"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/workspace"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Differ is what the run page needs of the repository (*workspace.Repo):
// each phase's diff stat and patch, and whether a finished run's branch
// holds work the user's current branch lacks (Unmerged of the branch: a
// merged run's page offers no merge).
type Differ interface {
	DiffStat(ctx context.Context, a, b string) ([]workspace.FileStat, error)
	Diff(ctx context.Context, a, b string, exclude []string, w io.Writer) error
	Unmerged(ctx context.Context, prefix string) (map[string]bool, error)
}

var _ Differ = (*workspace.Repo)(nil)

// Config makes a Server.
type Config struct {
	// Service reads the runs and answers them (serve's Pool).
	Service host.Service
	// Subscribe subscribes to the runner's events (host.Host.Subscribe);
	// nil: pages do not update live.
	Subscribe func(func(graph.Event)) (unsubscribe func())
	// Repo gives each phase's diff; nil leaves diffs out.
	Repo Differ
	// Transcripts is the directory of the runs' agent transcripts
	// (host.TranscriptDir); "" leaves them out.
	Transcripts string
	// Token, when set, is required of every request: as a bearer token,
	// or through the session cookie a "?token=" login sets.
	Token string
	// Key signs the session cookies and CSRF tokens; nil: 32 random bytes
	// (sessions end with the process).
	Key []byte
	// Now is the clock of running phases' durations; nil: time.Now.
	Now func() time.Time
	// Logger logs failed requests; nil discards.
	Logger *slog.Logger
	// Heartbeat is how often an idle event stream is pinged; 0: 15s.
	Heartbeat time.Duration
}

// validate fills in the defaults and rejects a config without a Service.
func (c *Config) validate() error {
	if c.Service == nil {
		return ErrNoService
	}
	if c.Key == nil {
		c.Key = make([]byte, 32)
		if _, err := rand.Read(c.Key); err != nil {
			return err
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Subscribe == nil {
		c.Subscribe = func(func(graph.Event)) func() { return func() {} }
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	return nil
}

// Server serves the inbox's pages. Close ends its event streams.
type Server struct {
	cfg    Config
	pages  *template.Template
	mux    *http.ServeMux
	closed chan struct{}
	once   sync.Once
}

var _ http.Handler = (*Server)(nil)

// New makes the Server of cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, pages: pages, mux: http.NewServeMux(), closed: make(chan struct{})}
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.authed(s.index))
	s.mux.HandleFunc("GET /live", s.authed(s.indexLive))
	s.mux.HandleFunc("GET /events", s.authed(s.events))
	s.mux.HandleFunc("GET /runs/{id}", s.authed(s.run))
	s.mux.HandleFunc("GET /runs/{id}/live", s.authed(s.runLive))
	s.mux.HandleFunc("GET /runs/{id}/events", s.authed(s.events))
	s.mux.HandleFunc("POST /runs/{id}/answer", s.authed(s.answer))
	return s, nil
}

// Close ends the event streams (before the HTTP server shuts down, which
// waits for them).
func (s *Server) Close() { s.once.Do(func() { close(s.closed) }) }

// ServeHTTP serves a request with the inbox's security headers: a content
// security policy that allows only the inbox's own script and style, no
// caching, no referrer (a "?token=" login must not leak).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}
