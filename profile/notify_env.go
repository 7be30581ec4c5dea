package profile

import (
	"net/url"
	"strings"

	"github.com/gaffer-dev/gaffer/host"
	"github.com/gaffer-dev/gaffer/profile/config"
	"github.com/gaffer-dev/gaffer/state"
)

// checkNotifyEnv returns an host.Refused error, as checkKeys does for
// a missing API key, when a notify target of nc takes its URL from an
// environment variable (url_env) that is unset or holds no http(s) URL:
// run, and serve for a submitted run, check it before any work, since the
// process that starts the run is the one that delivers its notices. The
// message names the variable, never its value.
func checkNotifyEnv(nc *state.NotifyConfig, profile string, getenv func(string) string) error {
	if nc == nil {
		return nil
	}
	for i, t := range nc.Targets {
		if t.URLEnv == "" {
			continue
		}
		v := strings.TrimSpace(getenv(t.URLEnv))
		if v == "" {
			return errorf(host.Refused, "notify target %d (%s): set the environment variable %s to its URL (url_env, profile %s)",
				i+1, t.Kind, t.URLEnv, or(profile, config.DefaultProfile))
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errorf(host.Refused, "notify target %d (%s): the environment variable %s must hold an http or https URL (url_env, profile %s)",
				i+1, t.Kind, t.URLEnv, or(profile, config.DefaultProfile))
		}
	}
	return nil
}

// CheckSubmitNotify is checkNotifyEnv for submit (and run --detach), in
// the submitting process's environment (getenv), before anything is queued: the
// notify section of the profile spec names in the configuration of the
// repository at root. A configuration that does not load is left
// to serve, which reports it when it starts the run (and checks the
// variables again, in its own environment, which is the one delivering).
func CheckSubmitNotify(root string, spec host.RunSpec, getenv func(string) string) error {
	cfg, err := config.Load(root, getenv)
	if err != nil {
		return nil
	}
	p, err := cfg.Effective(spec.Profile)
	if err != nil {
		return nil
	}
	return checkNotifyEnv(p.Notify.RunConfig(), p.Name, getenv)
}
