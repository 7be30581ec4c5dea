package profile

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/state"
)

// KeyVault holds the keys a gaffer process has taken out of its own
// environment. When a run's drivers are built, every variable its profile
// names as a key (keyNames) — the llm provider's api_key_env, the
// pass_env entries of its CLI agents and the url_env and secret_env of
// its notify targets — is read once, kept here, removed from the
// environment (os.Unsetenv) and blanked in the process's initial
// environment block, which /proc/PID/environ shows and Unsetenv does not
// change. So no process gaffer starts inherits a key, and none can read it
// from gaffer's /proc entry; the llm driver gets its key from here, a CLI
// agent the ones its pass_env lists, and the notices' deliverer (package
// notify, Config.Getenv) its targets' URLs and HMAC keys.
//
// The command gaffer's main gives the App one (IO.Keys). Without one (a
// program or test running the App in its own process) the environment is
// left as it is, and the keys are still withheld from every command and
// agent that does not list them in pass_env. A KeyVault is safe for
// concurrent use.
type KeyVault struct {
	mu   sync.Mutex
	keys map[string]string
}

// NewKeyVault returns an empty vault.
func NewKeyVault() *KeyVault { return &KeyVault{keys: map[string]string{}} }

// take moves the variables names out of the environment into the vault.
// A name already taken keeps its value. It is a no-op on a nil vault.
func (v *KeyVault) take(names []string) error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var blank []string
	for _, n := range names {
		val, ok := os.LookupEnv(n)
		if !ok {
			continue
		}
		if _, had := v.keys[n]; !had || val != "" {
			v.keys[n] = val
		}
		if err := os.Unsetenv(n); err != nil {
			return fmt.Errorf("unset %s: %w", n, err)
		}
		blank = append(blank, n)
	}
	if len(blank) == 0 {
		return nil
	}
	if err := blankInitialEnviron(blank); err != nil {
		return fmt.Errorf("remove %v from the process's initial environment: %w", blank, err)
	}
	return nil
}

// Getenv reads name from the vault, then from the environment.
func (v *KeyVault) Getenv(name string) string {
	if val, ok := v.Lookup(name); ok {
		return val
	}
	return os.Getenv(name)
}

// Lookup reads name from the vault alone, and reports whether the vault
// holds it; a nil vault holds nothing.
func (v *KeyVault) Lookup(name string) (string, bool) {
	if v == nil {
		return "", false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.keys[name]
	return val, ok
}

// keyNames returns the variables cfg's profile names as keys, sorted:
// the llm provider's api_key_env, every CLI agent's pass_env, and the
// url_env and secret_env of every notify target (a webhook's or ntfy
// topic's URL whose path is its secret, a webhook's HMAC key). An agent
// that printed one into a file would have it committed.
func keyNames(cfg state.RunConfig) []string {
	var names []string
	if cfg.Drivers.APIKeyEnv != "" {
		names = append(names, cfg.Drivers.APIKeyEnv)
	}
	for _, a := range cfg.Drivers.CLIAgents {
		names = append(names, a.PassEnv...)
	}
	names = append(names, notifyEnvNames(cfg.Notify)...)
	sort.Strings(names)
	return slices.Compact(names)
}

// notifyEnvNames returns the variables nc's targets name: their url_env
// and secret_env.
func notifyEnvNames(nc *state.NotifyConfig) []string {
	if nc == nil {
		return nil
	}
	var names []string
	for _, t := range nc.Targets {
		for _, n := range []string{t.URLEnv, t.SecretEnv} {
			if n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// agentEnviron returns the environment the processes of cfg's run start
// from: this process's, without any variable cfg names as a key, plus the
// ones in pass (a CLI agent's pass_env) with their values from getenv.
func agentEnviron(cfg state.RunConfig, pass []string, getenv func(string) string) []string {
	keys := keyNames(cfg)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := splitEnv(kv)
		if !slices.Contains(keys, name) {
			env = append(env, kv)
		}
	}
	for _, n := range pass {
		if !slices.Contains(keys, n) {
			continue
		}
		if val := getenv(n); val != "" {
			env = append(env, n+"="+val)
		}
	}
	return env
}

func splitEnv(kv string) (name, val string, ok bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' && i > 0 {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// agentOptions is what every driver a process makes shares besides the
// run's settings: where process groups are recorded, the keys, and how to
// warn that commands run unconfined.
type agentOptions struct {
	groups agent.GroupRecorder // nil: not recorded
	keys   *KeyVault           // nil: the environment is left alone
	getenv func(string) string // the keys' environment (Setup.getenv); nil: keys.Getenv
	warn   func(string)
	logs   string // the transcripts' directory (transcript.go); "": none kept
	runIDs bool   // agent lines name their run: several runs share the output (serve)
}

// env reads name from the keys' environment: the vault, then the
// Setup's environment.
func (o agentOptions) env(name string) string {
	if o.getenv != nil {
		return o.getenv(name)
	}
	return o.keys.Getenv(name)
}
