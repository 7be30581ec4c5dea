package cli

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/host/hoststore"
	"github.com/gaffer-dev/gaffer/workspace"
)

// Globals are the flags every command accepts, each also read from a
// GAFFER_* environment variable (the flag wins).
type Globals struct {
	Repo      string // --repo, GAFFER_REPO: the repository the run works on (the top of the work tree it is in)
	Store     string // --store, GAFFER_STORE: the store directory; default <repo>/.git/gaffer
	Profile   string // --profile, GAFFER_PROFILE: the configuration profile
	LogLevel  string // --log-level, GAFFER_LOG_LEVEL: debug, info, warn or error; "" when not given (warn, serve: info)
	LogFormat string // --log-format, GAFFER_LOG_FORMAT: text or json
}

func globalFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "repo", Value: ".", EnvVars: []string{"GAFFER_REPO"}, Usage: "the git repository to work on"},
		&ucli.StringFlag{Name: "store", EnvVars: []string{"GAFFER_STORE"}, Usage: "the store directory (default: .git/gaffer of the repository)"},
		&ucli.StringFlag{Name: "profile", EnvVars: []string{"GAFFER_PROFILE"}, Usage: "the configuration profile to use"},
		&ucli.StringFlag{Name: "log-level", EnvVars: []string{"GAFFER_LOG_LEVEL"}, Usage: "debug, info, warn or error (default: warn, beside the progress view; serve: info)"},
		&ucli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"GAFFER_LOG_FORMAT"}, Usage: "text or json"},
	}
}

// GlobalsFrom reads the global flags from a command's context and checks
// them: an unknown log level or format is a usage error. An empty store
// becomes the repository's git directory joined with "gaffer".
func GlobalsFrom(c *ucli.Context) (Globals, error) {
	g := Globals{
		Repo:      c.String("repo"),
		Store:     c.String("store"),
		Profile:   c.String("profile"),
		LogLevel:  strings.ToLower(c.String("log-level")),
		LogFormat: strings.ToLower(c.String("log-format")),
	}
	if g.Repo == "" {
		g.Repo = "."
	}
	g.Repo = repoTop(g.Repo)
	if _, err := parseLevel(g.LogLevel); err != nil {
		return Globals{}, err
	}
	if g.LogFormat != "text" && g.LogFormat != "json" {
		return Globals{}, usageErrorf("--log-format %q: want text or json", g.LogFormat)
	}
	if g.Store == "" {
		g.Store = filepath.Join(workspace.GitDir(g.Repo), "gaffer")
	}
	// DIR/ is DIR: the files kept beside the store (DIR.groups, DIR.logs,
	// DIR.sock) must not land inside it. A database URL stays as given.
	if !hoststore.IsURL(g.Store) {
		g.Store = filepath.Clean(g.Store)
	}
	return g, nil
}

// repoTop returns the top of the work tree dir is in, as git finds it:
// dir or the nearest directory above it with a .git entry (a directory,
// or the file of a linked work tree). A dir in no work tree is returned
// as it is, for the commands that need a repository to say so.
func repoTop(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == abs {
				return dir // as given: messages show what the user typed
			}
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

func parseLevel(s string) (slog.Level, error) {
	switch s {
	case "debug":
		return slog.LevelDebug, nil
	case "":
		return slog.LevelWarn, nil // not asked: the progress view says what happens
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, usageErrorf("--log-level %q: want debug, info, warn or error", s)
}

// Logger returns a logger writing to w at the level and in the format of
// g: warn when no level was given (a command's own output tells the story;
// serve defaults to info itself).
func (g Globals) Logger(w io.Writer) *slog.Logger {
	level, err := parseLevel(g.LogLevel)
	if err != nil {
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level}
	if g.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
