package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/daemon"
	"github.com/gaffer-dev/gaffer/metrics"
)

// metricsAddrFlag is the flag that serves /metrics, /healthz and /readyz
// from a run (always on in serve).
const metricsAddrFlag = "metrics-addr"

// serveMetrics counts l's runs into m and serves reg on addr until l
// closes.
func serveMetrics(ctx context.Context, l *local, addr string, reg *prometheus.Registry, m *metrics.Metrics) error {
	if counts, err := daemon.CountRuns(ctx, l); err == nil {
		m.SetRuns(counts)
	}
	l.OnClose(l.Subscribe(m.Observe))
	ln, err := metrics.Listen(addr)
	if err != nil {
		return metricsListenError(addr, err)
	}
	fmt.Fprintf(l.io.Err, "metrics on http://%s/metrics\n", ln.Addr())
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = metrics.Serve(sctx, ln, metrics.Handler(reg, nil)) }()
	l.OnClose(func() { cancel(); wg.Wait() })
	return nil
}

// flagString returns the value of a flag the command may not define.
func flagString(c *ucli.Context, name string) string {
	for _, n := range c.FlagNames() {
		if n == name {
			return c.String(name)
		}
	}
	return ""
}

// opsLogger returns a slog logger for the operations commands.
func opsLogger(c *ucli.Context, w io.Writer) *slog.Logger {
	g, _, err := globalsOf(c)
	if err != nil {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	if g.LogLevel == "" {
		g.LogLevel = "info" // a service's log is its only output
	}
	return g.Logger(w)
}

// withOps adds the operations layer's flags and commands: run gets
// --metrics-addr and --detach, status --watch; serve and submit join the
// list.
func (a *app) withOps(cmds []*ucli.Command) []*ucli.Command {
	for _, c := range cmds {
		switch c.Name {
		case "run":
			c.Flags = append(c.Flags,
				&ucli.StringFlag{Name: metricsAddrFlag, EnvVars: []string{"GAFFER_METRICS_ADDR"},
					Usage: "serve /metrics, /healthz and /readyz on this address (127.0.0.1 unless it names a host)"},
				&ucli.BoolFlag{Name: "detach", Usage: "queue the run in the gaffer serve process that holds the store (as submit) and return"})
			c.Action = a.detachOr(c.Action)
		case "status":
			c.Flags = append(c.Flags,
				&ucli.BoolFlag{Name: "watch", Aliases: []string{"w"}, Usage: "redraw the phase tree until the run stops (Ctrl-C to leave)"},
				&ucli.DurationFlag{Name: "interval", Value: time.Second, Usage: "how often --watch redraws"})
			c.Action = a.watchOr(c.Action)
		}
	}
	return append(cmds, serveCommand(a.io), submitCommand(a.io))
}

// detachOr queues the run in serve with --detach (as submit), and runs it
// here otherwise.
func (a *app) detachOr(local ucli.ActionFunc) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		if !c.Bool("detach") {
			return local(c)
		}
		if c.IsSet(metricsAddrFlag) {
			return usageErrorf("--detach and --%s: the serve process serves the metrics", metricsAddrFlag)
		}
		return Submit(c, a.io)
	}
}
