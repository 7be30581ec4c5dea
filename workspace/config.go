package workspace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// Signature is a commit's author: a name and an email address.
type Signature struct {
	Name  string
	Email string
}

// String returns "Name <email>".
func (s Signature) String() string { return fmt.Sprintf("%s <%s>", s.Name, s.Email) }

// IsZero reports whether both name and email are empty.
func (s Signature) IsZero() bool { return s.Name == "" && s.Email == "" }

// The author used when no configuration names one.
const (
	fallbackName  = "gaffer"
	fallbackEmail = "gaffer@localhost"
)

// Author returns the signature commits are made with when
// CommitOptions.Author is not set. The name and the email are looked up
// separately, like git does: GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL in the
// environment, then user.name / user.email in the repository's config,
// then in the global config (GIT_CONFIG_GLOBAL when set, otherwise
// ~/.gitconfig then $XDG_CONFIG_HOME/git/config), then in the system
// config (unless GIT_CONFIG_NOSYSTEM is set); what is still missing is
// filled from "gaffer" <gaffer@localhost>. Include directives are not
// followed.
func (r *Repo) Author() Signature {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.author()
}

func (r *Repo) author() Signature {
	cfgs := r.configs()
	return Signature{
		Name:  lookup(cfgs, "GIT_AUTHOR_NAME", "user", "name", fallbackName),
		Email: lookup(cfgs, "GIT_AUTHOR_EMAIL", "user", "email", fallbackEmail),
	}
}

func lookup(cfgs []*config.Config, env, section, key, def string) string {
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v
	}
	if v, ok := configValue(cfgs, section, key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// configs returns the repository's, the global and the system
// configuration, highest priority first. Files that are missing or do not
// parse are skipped: configuration only tunes defaults here.
func (r *Repo) configs() []*config.Config {
	var out []*config.Config
	add := func(path string) {
		if path == "" {
			return
		}
		if c := readConfig(path); c != nil {
			out = append(out, c)
		}
	}
	add(filepath.Join(r.commonDir, "config"))
	for _, p := range globalConfigPaths() {
		add(p)
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
			add(p)
		} else {
			add("/etc/gitconfig")
		}
	}
	return out
}

// globalConfigPaths lists the global config files, highest priority first.
func globalConfigPaths() []string {
	if p, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		return []string{p}
	}
	var out []string
	home, _ := os.UserHomeDir()
	if home != "" {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	if x := xdgConfigHome(home); x != "" {
		out = append(out, filepath.Join(x, "git", "config"))
	}
	return out
}

func xdgConfigHome(home string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config")
}

func readConfig(path string) *config.Config {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	c := config.New()
	if err := config.NewDecoder(io.LimitReader(f, 1<<20)).Decode(c); err != nil {
		return nil
	}
	return c
}

// configValue returns the value of section.key (no subsection) from the
// first config that sets it; within one file the last setting wins.
func configValue(cfgs []*config.Config, section, key string) (string, bool) {
	for _, c := range cfgs {
		var v string
		found := false
		for _, s := range c.Sections {
			if !s.IsName(section) {
				continue
			}
			for _, o := range s.Options {
				if o.IsKey(key) {
					v, found = o.Value, true
				}
			}
		}
		if found {
			return v, true
		}
	}
	return "", false
}

// coreConfig holds the core.* settings the package honours.
type coreConfig struct {
	fileMode     bool   // core.fileMode: track the executable bit (default true)
	excludesFile string // core.excludesFile, or git's default location
}

func (r *Repo) coreConfig() coreConfig {
	cfgs := r.configs()
	cc := coreConfig{fileMode: true}
	if v, ok := configValue(cfgs, "core", "filemode"); ok {
		if b, ok := parseBool(v); ok {
			cc.fileMode = b
		}
	}
	home, _ := os.UserHomeDir()
	if v, ok := configValue(cfgs, "core", "excludesfile"); ok {
		cc.excludesFile = expandHome(strings.TrimSpace(v), home)
	} else if x := xdgConfigHome(home); x != "" {
		cc.excludesFile = filepath.Join(x, "git", "ignore")
	}
	return cc
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// parseBool reads a git boolean.
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}
